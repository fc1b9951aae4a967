// rmsnorm_modulate's cases for the tests: a case drawn from a spec (dtype,
// shape, value class, seed), and the host twin's outputs.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "case/case_spec.h"
#include "harness/impls/implementation.h"
#include "harness/run/runner.h"
#include "kernels/rmsnorm_modulate.h"

namespace gatecheck::testing::rms {

inline const OpSchema& op() { return rmsnorm_modulate_schema(); }

// The case of this spec: index seeded by seed, values by seed + 1.
inline Case make(DType t, int64_t rows, int64_t dim, int64_t gates, const std::string& cls, uint64_t seed) {
  CaseSpec s;
  s.op = &op();
  s.dtype = t;
  s.rows = rows;
  s.dim = dim;
  s.gates = gates;
  s.value_class = cls;
  s.index_seed = seed;
  s.value_seed = seed + 1;
  return make_case_from_spec(s);
}

// The host twin's outputs (a failed call fails the test).
inline Outputs run_host(const Case& c) {
  static const Implementation host = make_implementation("host", Device::cpu, op());
  RunResult r = run_case(host, c);
  EXPECT_TRUE(r.status.ok()) << r.status.message;
  return r.outputs;
}

}  // namespace gatecheck::testing::rms
