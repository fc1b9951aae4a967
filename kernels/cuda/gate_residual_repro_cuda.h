// gate_residual's reproducible mode on CUDA (implementation "cuda-repro"):
// the "cuda" kernels for grad_res and grad_y (and for the index check), and
// grad_gate as host-repro makes it (exact_sum.h): the same state words and the
// same bits, for every order of the rows and every split of the batch.
//
// The partial: one thread per (tile of rows, column) keeps an exact local sum
// for the current gate and, when the gate changes or the tile ends, adds its
// normalised words to the global state with integer atomics (a carry out of
// a lower word's 64 bits moves up as 2^8 of the next). Integer addition does
// not depend on the order of the atomics; a final normalisation gives the
// canonical words. Pointers are device pointers; work goes on p.stream.
#pragma once

#include <cstdint>

#include "../gate_residual.h"
#include "../gatecheck_split_exchange.h"

namespace gatecheck {

// state: gate_residual_repro_state_words(p) words on the device, normalised on return.
Status gate_residual_repro_partial_cuda(const gatecheck_problem& p, const void* grad_out, const int64_t* index,
                                        const void* y, uint64_t* state);
// out = the n states at `states` (n consecutive device states, in rank
// order) summed word by word and normalised: the combine on the device.
// n <= kExactSumMaxStates.
Status gate_residual_repro_combine_cuda(const gatecheck_problem& p, const uint64_t* states, int32_t n, uint64_t* out);
// grad_gate from a device state (any sum of at most kExactSumMaxStates normalised states).
Status gate_residual_repro_finalize_cuda(const gatecheck_problem& p, const uint64_t* state, void* grad_gate);
// The whole backward (grad_gate exact); synchronises p.stream, reporting a bad index by name.
Status gate_residual_bwd_cuda_repro(const gatecheck_problem& p, const void* grad_out, const void* gate,
                                    const int64_t* index, const void* y, void* grad_res, void* grad_gate,
                                    void* grad_y);

const gatecheck_plugin* gate_residual_repro_cuda_plugin();
// Its exchange: device tensors in the calls, states in host memory.
const gatecheck_split_exchange* gate_residual_repro_cuda_exchange();

}  // namespace gatecheck
