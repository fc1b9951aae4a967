// A small seeded case generator for these tests (independent of the property
// suite's generators, so the shrinker can be tested on its own).
#pragma once

#include <cstdint>
#include <random>

#include "case/case.h"

namespace gatecheck::testing {

// Normal(0,1) values (the gate scaled by `gate_scale`), uniform random index.
inline Case random_case(uint64_t seed, DType t, int64_t rows, int64_t dim, int64_t gates,
                        float gate_scale = 1.0f) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int64_t> pick(0, gates > 0 ? gates - 1 : 0);
  Case c = make_case(t, rows, dim, gates);
  for (auto& k : c.index) k = pick(rng);
  for (int64_t i = 0; i < c.input("gate").numel(); ++i) c.input("gate").set_value_rn(i, gate_scale * normal(rng));
  for (HostTensor* x : {&c.input("res"), &c.input("y"), &c.input("grad_out")})
    for (int64_t i = 0; i < x->numel(); ++i) x->set_value_rn(i, normal(rng));
  c.index_pattern = "uniform";
  c.value_class = "normal";
  return c;
}

}  // namespace gatecheck::testing
