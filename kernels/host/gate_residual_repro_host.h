// gate_residual's reproducible mode on the host (implementation
// "host-repro"): forward, grad_res and grad_y as "host"; grad_gate as a
// binned sum of the fp32 terms g*y (binned_sum.h), rounded once to the
// dtype, so it is the same for every order of the rows and every split of
// them into parts whose states are combined. The split exchange
// (gatecheck_split_exchange.h) declares that: a part's state is
// gates x dim x kBinnedWords words.
#pragma once

#include "../gate_residual.h"
#include "../gatecheck_split_exchange.h"

namespace gatecheck {

// What a state is, as the exchanges (host and CUDA) declare it.
inline constexpr const char* kGateResidualReproStateText =
    "grad_gate binned: gates x dim x 4 int64 words (3 digits: exact sums of the terms' 32-bit shares in the top "
    "3 absolute bins, the top bin set by the largest term; top bin and NaN/Inf counts); combine = align to the "
    "larger top bin, then integer sum (an all-reduce: MAX of the top bin, binned_align, SUM)";

// Words of one state: gates * dim * kBinnedWords, element (k, j) at
// (k * dim + j) * kBinnedWords.
int64_t gate_residual_repro_state_words(const gatecheck_problem& p);
// The state of the rows of one part: every row's g*y added to its gate's element.
Status gate_residual_repro_partial(const gatecheck_problem& p, const void* grad_out, const int64_t* index,
                                   const void* y, uint64_t* state);
// out = the n states combined (any order gives the same words).
void gate_residual_repro_combine(const gatecheck_problem& p, const uint64_t* const* states, int32_t n,
                                 uint64_t* out);
// grad_gate from a state: each element rounded once to the dtype.
void gate_residual_repro_finalize(const gatecheck_problem& p, const uint64_t* state, void* grad_gate);

const gatecheck_plugin* gate_residual_repro_host_plugin();
const gatecheck_split_exchange* gate_residual_repro_host_exchange();

}  // namespace gatecheck
