// Scale cases for the tests: a ScaleSpec with the three seeds of a test file
// (index, values, plan: seed, seed + 1, seed + 2), so each file keeps its own
// cases, and the case made from it with the exact values' bound set.
#pragma once

#include <cstdint>
#include <string>

#include "case/scale_case.h"

namespace gatecheck::test {

inline ScaleSpec scale_spec(uint64_t seed, DType t, int64_t rows, int64_t dim, int64_t gates, ScaleValues v,
                            const std::string& pattern, int64_t segment, const std::string& plan) {
  ScaleSpec s;
  s.dtype = t;
  s.rows = rows;
  s.dim = dim;
  s.gates = gates;
  s.index_pattern = pattern;
  s.segment = segment;
  s.index_seed = seed;
  s.values = v;
  s.value_seed = seed + 1;
  s.plan_kind = plan;
  s.plan_seed = seed + 2;
  return s;
}

// As drawn: exact values get the bound that keeps every sum over the longest
// segment exact (case/scale_values.h).
inline ScaleCase scale_case(uint64_t seed, DType t, int64_t rows, int64_t dim, int64_t gates, ScaleValues v,
                            const std::string& pattern, int64_t segment, const std::string& plan) {
  ScaleSpec s = scale_spec(seed, t, rows, dim, gates, v, pattern, segment, plan);
  if (v == ScaleValues::exact) s.value_bound = exact_value_bound(t, 0, longest_segment(make_scale_index(s), gates));
  return make_scale_case(s);
}

}  // namespace gatecheck::test
