// The edits the shrinker tries on a Case. Each returns a new, self-consistent
// Case (index, tensors and batch plan agree) and never modifies its input.
#pragma once

#include <cstdint>
#include <vector>

#include "../../case/case.h"

namespace gatecheck {

// Drops rows r with drop[r] set. The batch plan follows: removed rows leave
// their batches, the rest are renumbered, empty batches disappear, and a plan
// left with no batches at all (when it had some) is removed.
Case without_rows(const Case& c, const std::vector<bool>& drop);

// Drops columns j with drop[j] set from res, y, grad_out and gate.
Case without_columns(const Case& c, const std::vector<bool>& drop);

// Gates no row uses.
std::vector<bool> unused_gates(const Case& c);

// Drops gates k with drop[k] set; every dropped gate must be unused
// (std::invalid_argument otherwise). Higher indices are renumbered.
Case without_gates(const Case& c, const std::vector<bool>& drop);

// Rows that used gate `from` use gate `to` instead; gate `from` is then
// dropped (it is unused).
Case with_gate_merged(const Case& c, int64_t from, int64_t to);

// Batch plan edits.
Case without_plan(const Case& c);
Case without_batch(const Case& c, size_t batch);
// Batches `batch` and `batch + 1` as one, its rows in row order (a split
// with fewer parts and the same rows).
Case with_batches_merged(const Case& c, size_t batch);
Case without_batch_entry(const Case& c, size_t batch, size_t entry);  // one row of one batch
Case with_repeats(const Case& c, int repeats);

// How complex one value is, for the value pass: +0 < -0 < 1 < -1 < 2 < -2 ...
// (small integers) < other finite values < infinities < NaN. A value edit is
// accepted only when it lowers this rank, so the pass always terminates.
int64_t value_rank(DType t, uint32_t bits);

}  // namespace gatecheck
