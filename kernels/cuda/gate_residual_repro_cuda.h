// gate_residual's reproducible mode on CUDA (implementation "cuda-repro"):
// grad_gate as host-repro makes it (binned_sum.h: the same state words and
// the same bits, for every order of the rows and every split of the batch),
// in one backward call that is the "cuda" backward with its accumulator
// swapped (gate_residual_bwd_cuda_binned): the gate-sorted plan, one pass
// over g and y that writes grad_res and grad_y and keeps each tile's
// per-column binned sums in registers, a state per tile, then a fold per gate
// (integer, order-free) that rounds once. Pointers are device pointers; work
// goes on p.stream.
#pragma once

#include <cstdint>

#include "../gate_residual.h"
#include "../gatecheck_split_exchange.h"

namespace gatecheck {

// state: gate_residual_repro_state_words(p) words on the device (the rows' binned sums).
Status gate_residual_repro_partial_cuda(const gatecheck_problem& p, const void* grad_out, const int64_t* index,
                                        const void* y, uint64_t* state);
// out = the n states at `states` (n consecutive device states, in rank
// order) combined: the combine on the device (any order gives the same words).
Status gate_residual_repro_combine_cuda(const gatecheck_problem& p, const uint64_t* states, int32_t n, uint64_t* out);
// grad_gate from a device state, rounded once.
Status gate_residual_repro_finalize_cuda(const gatecheck_problem& p, const uint64_t* state, void* grad_gate);
// The whole backward (grad_gate exact); synchronises p.stream, reporting a bad index by name.
Status gate_residual_bwd_cuda_repro(const gatecheck_problem& p, const void* grad_out, const void* gate,
                                    const int64_t* index, const void* y, void* grad_res, void* grad_gate,
                                    void* grad_y);

const gatecheck_plugin* gate_residual_repro_cuda_plugin();
// Its exchange: device tensors in the calls, states in host memory.
const gatecheck_split_exchange* gate_residual_repro_cuda_exchange();

}  // namespace gatecheck
