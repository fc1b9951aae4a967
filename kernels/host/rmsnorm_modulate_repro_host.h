// rmsnorm_modulate's reproducible mode on the host (implementation
// "host-repro"): forward, out and dx as the host twin (its bits); dweight,
// dshift and dscale each a binned sum (binned_sum.h) of the twin's own fp32
// terms (d*x*rstd, g, g*n), rounded once to the dtype, so they are the same
// for every order of the rows and every split of them into parts whose
// states are combined. The split exchange (gatecheck_split_exchange.h)
// declares that.
#pragma once

#include "../gatecheck_plugin_v2.h"
#include "../gatecheck_split_exchange.h"
#include "../op_schema.h"

namespace gatecheck {

// What a state is, as the exchange declares it.
inline constexpr const char* kRmsnormModulateReproStateText =
    "dweight, dshift, dscale binned: (dim + 2 x gates x dim) x 4 int64 words (binned_sum.h: 3 digits of the top 3 "
    "absolute bins, top bin and NaN/Inf counts); combine = align to the larger top bin, then integer sum (an "
    "all-reduce: MAX of the top bin, binned_align, SUM)";

// Words of one state: (dim + 2 * gates * dim) * kBinnedWords. Elements:
// dweight[j] at j, dshift[k, j] at dim + k * dim + j, dscale[k, j] at
// dim + gates * dim + k * dim + j (each times kBinnedWords).
int64_t rmsnorm_modulate_repro_state_words(const gatecheck_problem& p);
// The state of a backward call's rows (its inputs; outputs unused): every
// row's terms added to their elements. Checks the call's inputs first.
Status rmsnorm_modulate_repro_partial(const OpCall& bwd, uint64_t* state);
// out = the n states combined (any order gives the same words).
void rmsnorm_modulate_repro_combine(const gatecheck_problem& p, const uint64_t* const* states, int32_t n,
                                    uint64_t* out);
// dweight, dshift and dscale of bwd from a state, each rounded once to the dtype.
void rmsnorm_modulate_repro_finalize(const OpCall& bwd, const uint64_t* state);

const gatecheck_op_plugin* rmsnorm_modulate_repro_host_plugin();
const gatecheck_split_exchange* rmsnorm_modulate_repro_host_exchange();

}  // namespace gatecheck
