// rmsnorm_modulate's reproducible mode on CUDA (implementation "cuda-repro"):
// out and dx are the "cuda" kernels' (the host twin's bits); dweight, dshift
// and dscale are host-repro's (rmsnorm_modulate_repro_host.h): the same state
// words and the same bits, binned sums (binned_sum.h) of the same fp32 terms
// (d*x*rstd, g, g*n, with rstd in rmsnorm_modulate_order.h's order), so they
// are the same for every order of the rows and every split of the batch.
// On the device the rows are sorted by gate; a thread keeps one column's
// binned sums over a tile of the sorted rows (dshift's and dscale's over each
// gate's run of it) in registers and adds them to the element's wide sum
// (binned_wide.h) with integer atomics when they end; the wide sums are then
// cut to the state's window. The backward's dx is the cuda backward's row
// kernel's, which also gives the terms their rstd; none of the cuda
// backward's fp32 column sums is made. Pointers are device pointers; work
// goes on c.p.stream.
#pragma once

#include <cstdint>

#include "../gatecheck_plugin_v2.h"
#include "../gatecheck_split_exchange.h"
#include "../op_schema.h"

namespace gatecheck {

// Scratch a partial takes: rstd, 88 bytes of wide sums a state element, and
// the sort of the rows by gate (24 bytes a row and CUB's space).
int64_t rmsnorm_modulate_repro_cuda_scratch_bytes(const gatecheck_problem& p);
// The state of a backward call's rows: rmsnorm_modulate_repro_state_words(c.p)
// words at `state` (host-repro's layout). c: a call whose inputs passed
// check_call (index not read on the host); its outputs are not used. *bad (a
// device word) ends as the first row whose index is out of range, else ~0;
// the state is then meaningless. scratch: rmsnorm_modulate_repro_cuda_
// scratch_bytes, 256-byte aligned, or null (the stream's memory pool). No sync.
// with_dx: c's dx too, the cuda backward's bits, from the same pass over the
// rows that gives the terms their rstd (nothing written on a bad index).
Status rmsnorm_modulate_repro_partial_cuda(const OpCall& c, uint64_t* state, unsigned long long* bad,
                                           void* scratch = nullptr, bool with_dx = false);
// out = the n states at `states` (n consecutive device states) combined; any
// order gives the same words.
Status rmsnorm_modulate_repro_combine_cuda(const gatecheck_problem& p, const uint64_t* states, int32_t n,
                                           uint64_t* out);
// c's dweight, dshift and dscale from a device state, each rounded once (its
// other outputs are not used).
Status rmsnorm_modulate_repro_finalize_cuda(const OpCall& c, const uint64_t* state);

// Rows whose terms the terms kernel adds at once where none needs a new top
// bin (1, 2 or 4; the same bits every way; false, and no change, for any
// other). Process-wide; for the tests that name each and the cost test,
// which times each.
constexpr int kTermsRowsAtOnceDefault = 2;
bool rmsnorm_modulate_repro_cuda_set_terms_rows(int rows);

const gatecheck_op_plugin* rmsnorm_modulate_repro_cuda_plugin();
// Its exchange: device tensors in the calls, states in host memory.
const gatecheck_split_exchange* rmsnorm_modulate_repro_cuda_exchange();

}  // namespace gatecheck
