// The split exchange of an implementation (gatecheck_split_exchange.h) run
// over cases: each call's tensors laid out in this thread's arena on the
// implementation's device, as run_case lays them out; states in host memory.
#pragma once

#include <cstdint>
#include <vector>

#include "../../case/case.h"
#include "../impls/implementation.h"

namespace gatecheck {

// The state of part's rows (impl.exchange must be set).
Status exchange_partial(const Implementation& impl, const Case& part, std::vector<uint64_t>* state);
// The states combined in rank order, for a problem shaped as full.
Status exchange_combine(const Implementation& impl, const Case& full, const std::vector<std::vector<uint64_t>>& states,
                        std::vector<uint64_t>* out);
// The row reductions of full from a state: written into out's tensors of
// those outputs (out shaped by outputs_for(full)); the others untouched.
Status exchange_finalize(const Implementation& impl, const Case& full, const std::vector<uint64_t>& state,
                         Outputs* out);

// The op's outputs that reduce over rows (segment_sum and all_rows_sum), in order.
std::vector<int> row_reduction_outputs(const OpSchema& op);

}  // namespace gatecheck
