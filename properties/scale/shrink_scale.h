// Shrinking a failure found at scale. A scale case shrinks as a view of the
// case it was drawn as (case/scale_case.h), so every candidate keeps its
// values and replays from spec + view. The passes are built for cases of
// 10^5 to 10^6 rows, where the ordinary shrinker's one-row-at-a-time passes
// would take hours:
//  - rows: binary search for the shortest failing prefix, then for the most
//    leading rows that can go, then deletion of blocks (halves, quarters, ...
//    down to 1/16 of the rows, at most 8 blocks a size);
//  - columns: the same;
//  - gates: drop the unused, merge every used gate into one, then each into
//    the lowest (exact values only while they stay exact: a merged segment is
//    longer);
//  - the plan: drop it, or keep one batch.
// Once the case is small (kSmallScaleElements) and the ordinary property
// still fails on its explicit values, it becomes an ordinary Case (`small`),
// which the ordinary shrinker (shrink.h) can take further: `gatecheck check`
// does, as for every failure. A candidate counts only when the property fails the same way
// (shrink_property.cpp's rule: same outputs, vacuous only for vacuous, a
// claimed failure stays claimed).
#pragma once

#include <functional>
#include <optional>

#include "../../case/scale_case.h"
#include "scale_properties.h"

namespace gatecheck {

constexpr int64_t kSmallScaleElements = 4096;

using ScaleShrinkLog = std::function<void(const std::string&)>;
using ScaleShrinkStop = std::function<bool()>;

struct ScaleShrinkResult {
  ScaleCase minimal;           // the smallest failing view
  std::optional<Case> small;   // set when it became small: minimal's explicit values, still failing
  Verdict verdict;             // on the final minimal case
  int steps = 0, attempts = 0;
  bool cut_short = false, interrupted = false;
  double seconds = 0;
};

// `original` is the verdict on c (failing). Candidates that do not fit in
// memory count as not failing. `before` is called with each candidate before
// it runs (crash safety: the CLI saves it).
ScaleShrinkResult shrink_scale_case(const Subject& impl, const std::string& property, const ScaleCase& c,
                                    const Verdict& original, const ScaleCheckOptions& o, const ScaleShrinkLog& log = nullptr,
                                    double max_seconds = 60, const ScaleShrinkStop& stop = nullptr,
                                    const std::function<void(const ScaleCase&)>& before = nullptr);

// View edits, each relative to c's current view (exposed for tests).
ScaleView view_keep_rows(const ScaleCase& c, const std::vector<int64_t>& rows);  // case rows, ascending
ScaleView view_keep_cols(const ScaleCase& c, const std::vector<int64_t>& cols);  // case columns, ascending
// Keeps the gates k with keep[k]; a row of gate k uses gate into[k] (into[k] == k: itself).
ScaleView view_keep_gates(const ScaleCase& c, const std::vector<bool>& keep, const std::vector<int64_t>& into);

}  // namespace gatecheck
