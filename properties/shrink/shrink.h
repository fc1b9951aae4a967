// The project's own shrinker, for cases that come from files or the fuzzer
// (RapidCheck shrinks what it generates). Deterministic: the same input gives
// the same steps and the same result (unless the time or attempt cap cuts the
// search short, which the result reports).
#pragma once

#include <functional>
#include <string>

#include "../catalog/contract.h"
#include "../../case/case.h"
#include "../checks/properties.h"

namespace gatecheck {

using ShrinkLog = std::function<void(const std::string&)>;
// Asked between candidates: once it returns true the search stops with the
// smallest failing case so far, and the candidate in hand is not taken (a
// Ctrl-C may have cut its call short, which must not read as a failure).
using ShrinkStop = std::function<bool()>;

struct ShrinkResult {
  Case minimal;
  Verdict verdict;       // the property's verdict on `minimal` (still failing)
  int steps = 0;         // accepted shrink steps
  int attempts = 0;      // candidates tried
  bool cut_short = false;  // stopped by the time or attempt cap or by `stop`, not at a fixed point
  bool interrupted = false;  // stopped by `stop`
  double seconds = 0;      // time spent shrinking
};

// Shrinks rows, dim, gates and the batch plan, and moves values towards 0, 1
// and small integers, while `property` still fails on `impl` (for a claimed
// output if the original failure was claimed). `log` receives one line per
// accepted step. A candidate on which the property fails only as vacuous
// (its plan compared nothing) never stands in for a real failure. popt: e.g. run every call in a child process (--isolate). Throws
// std::invalid_argument if the case does not fail.
ShrinkResult shrink_case(const Subject& impl, const std::string& property, const Case& c,
                         const ShrinkLog& log = nullptr, double max_seconds = 60, const PropertyOptions& popt = {},
                         const ShrinkStop& stop = nullptr);

// The search itself, over any predicate: keeps the smallest case found for
// which `still_fails` is true. A predicate that throws counts as "does not
// fail" (the candidate is rejected). `c` itself is assumed to fail; it is not
// re-checked. max_attempts = 0 means no attempt cap. `verdict` is left empty.
ShrinkResult shrink_case_with(const Case& c, const std::function<bool(const Case&)>& still_fails,
                              const ShrinkLog& log = nullptr, double max_seconds = 60,
                              int max_attempts = 0, const ShrinkStop& stop = nullptr);

}  // namespace gatecheck
