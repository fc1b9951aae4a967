// Where the rows of a Case land under a batch plan, and whether the plan
// really moves anything. These are the vacuity guards of the invariance
// properties: a pass that compared nothing, or compared rows that never left
// their place, proves nothing and is reported as a failure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "case.h"

namespace gatecheck {

struct Movement {
  int64_t compared = 0;         // rows (or whole gate segments) the plan lets us compare
  bool offset_moved = false;    // some compared one sat at a different offset than in the full batch
  bool size_changed = false;    // some compared one ran in a batch of a different size
  bool ok() const { return compared > 0 && offset_moved && size_changed; }
  std::string why_vacuous() const;  // "" when ok()
};

// Rows of each gate of c, in row order.
std::vector<std::vector<int64_t>> rows_by_gate(const Case& c);

// Used gates of c whose rows all appear in `batch` exactly once each, in row
// order (the premise of segment invariance). `by_gate` is rows_by_gate(c).
std::vector<int64_t> whole_segments(const std::vector<std::vector<int64_t>>& by_gate,
                                    const Case& c, const std::vector<int64_t>& batch);

// Does the plan move rows / whole segments (every batch compared, all of it)?
Movement row_movement(const Case& c, const BatchPlan& p);
Movement segment_movement(const Case& c, const BatchPlan& p);

}  // namespace gatecheck
