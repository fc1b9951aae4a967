// Test cases with the prior art's data: N(0,1) values, the gate scaled by
// 0.1, a uniformly random index, and a sprinkle of signed zeros so that
// bitwise checks also see +0/-0. Deterministic for a seed.
#pragma once

#include <cstdint>
#include <random>

#include "case/case.h"

namespace gatecheck::test {

inline void fill_normal(HostTensor& t, std::mt19937_64& rng, double scale) {
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_int_distribution<int> pick(0, 63);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const int p = pick(rng);
    const double v = p == 0 ? 0.0 : p == 1 ? -0.0 : normal(rng) * scale;
    t.set_value_rn(i, float(v));
  }
}

inline Case random_case(DType t, int64_t rows, int64_t dim, int64_t gates, uint64_t seed) {
  Case c = make_case(t, rows, dim, gates);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> gate_of(0, gates > 0 ? gates - 1 : 0);
  for (auto& k : c.index) k = gate_of(rng);
  fill_normal(c.input("res"), rng, 1.0);
  fill_normal(c.input("gate"), rng, 0.1);
  fill_normal(c.input("y"), rng, 1.0);
  fill_normal(c.input("grad_out"), rng, 1.0);
  c.value_class = "normal";
  c.index_pattern = "random";
  return c;
}

}  // namespace gatecheck::test
