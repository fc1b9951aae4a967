// The inputs a contract counts as valid. By default every input the op
// contract allows, empty problems included (rows = 0 or dim = 0). Some real
// ops reject empty inputs by design; their contract says so once
// ("valid rows>=1,dim>=1"), rather than every property failing on the first
// empty case generated. The generators then draw only valid inputs
// (generation_limits.h), the shrinkers never leave them, error_inputs builds
// its probes on them, and a replay of a case outside them is refused.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "../../case/case.h"

namespace gatecheck {

struct ValidInputs {
  static constexpr int64_t kNoLimit = std::numeric_limits<int64_t>::max();
  int64_t min_rows = 0, min_dim = 0, min_gates = 0;
  int64_t max_rows = kNoLimit, max_dim = kNoLimit, max_gates = kNoLimit;

  bool narrowed() const;  // excludes some input of the op contract
  // "" if c is valid input here, else why not ("rows = 0 is outside the
  // contract's valid inputs (rows>=1,dim>=1)").
  std::string why_not(const Case& c) const;
  bool admits(const Case& c) const { return why_not(c).empty(); }
  std::string describe() const;  // "rows>=1,dim>=1" ("" when not narrowed)
  // Both sets of bounds at once (the tighter of each).
  ValidInputs within(const ValidInputs& o) const;
  // "rows>=1,dim>=1,gates<=64": bounds on rows, dim and gates, each >= or <=
  // a whole number, comma-separated. `what` leads every error message
  // ("--valid"). rows>=N is accepted for N <= 1 only: row_invariance and
  // segment_invariance run rows on their own, so every contract must accept
  // a single row. Throws std::invalid_argument naming the bad item.
  static ValidInputs parse(const std::string& list, const std::string& what);
};

}  // namespace gatecheck
