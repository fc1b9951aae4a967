// Small hand-made cases for the property tests.
#pragma once

#include "case/case.h"
#include "properties/generate/generators.h"

namespace gatecheck::testing {

// A case with N(0,1) values (gate x 0.1), the given index and an optional plan.
inline Case hand_case(DType t, int64_t rows, int64_t dim, int64_t gates, std::vector<int64_t> index,
                      uint64_t seed = 7, const std::string& values = "normal") {
  Case c = make_case(t, rows, dim, gates);
  c.index = std::move(index);
  fill_values(&c, values, seed);
  c.index_pattern = "hand";
  c.value_class = values;
  return c;
}

inline BatchPlan plan_of(const std::string& kind, std::vector<std::vector<int64_t>> batches, int repeats = 0) {
  BatchPlan p;
  p.kind = kind;
  p.batches = std::move(batches);
  p.repeats = repeats;
  return p;
}

}  // namespace gatecheck::testing
