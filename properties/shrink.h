// The project's own shrinker, for cases that come from files or the fuzzer
// (RapidCheck shrinks what it generates). Deterministic: the same input gives
// the same steps and the same result.
#pragma once

#include <functional>
#include <string>

#include "../harness/implementation.h"
#include "case.h"
#include "properties.h"

namespace gatecheck {

struct ShrinkResult {
  Case minimal;
  Verdict verdict;       // the property's verdict on `minimal` (still failing)
  int steps = 0;         // accepted shrink steps
  int attempts = 0;      // candidates tried
};

// Shrinks rows, dim, gates and the batch plan, and moves values towards 0, 1
// and small integers, while `property` still fails on `impl` (for a claimed
// output if the original failure was claimed). `log` receives one line per
// accepted step. Throws std::invalid_argument if the case does not fail.
ShrinkResult shrink_case(const Implementation& impl, const std::string& property, const Case& c,
                         const std::function<void(const std::string&)>& log = nullptr,
                         double max_seconds = 60);

}  // namespace gatecheck
