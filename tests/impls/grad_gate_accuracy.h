// Measures of grad_gate accuracy for the documented torch-eager findings.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "harness/run/runner.h"

namespace gatecheck::test {

// max |got - exact| / max |exact| over grad_gate, exact in float64, as the
// prior art measures it.
inline double grad_gate_relative_error(const Case& c, const HostTensor& got) {
  std::vector<double> exact(size_t(c.gates * c.dim), 0.0);
  for (int64_t r = 0; r < c.rows; ++r)
    for (int64_t j = 0; j < c.dim; ++j)
      exact[size_t(c.index[size_t(r)] * c.dim + j)] +=
          double(c.input("grad_out").value(r * c.dim + j)) * double(c.input("y").value(r * c.dim + j));
  double err = 0, mag = 0;
  for (size_t i = 0; i < exact.size(); ++i) {
    err = std::max(err, std::fabs(double(got.value(int64_t(i))) - exact[i]));
    mag = std::max(mag, std::fabs(exact[i]));
  }
  return err / mag;
}

// What an implementation's grad_gate makes of 4096 terms of 1*1 on one gate,
// in dtype t: 4096 if it accumulates in fp32 (in any order), the largest
// integer from which +1 rounds back down (bf16: 256, f16: 2048) if it
// accumulates in the dtype. Order-free, so it also reads atomics.
inline double sum_of_4096_ones(const Implementation& impl, DType t) {
  Case c = make_case(t, 4096, 1, 1);
  for (int64_t r = 0; r < c.rows; ++r) {
    c.input("y").set_value_rn(r, 1.0f);
    c.input("grad_out").set_value_rn(r, 1.0f);
  }
  const RunResult r = run_case(impl, c);
  return r.status.ok() ? double(r.outputs["grad_gate"].value(0)) : std::nan("");
}
constexpr double kSumInBf16 = 256, kSumInF16 = 2048, kSumInF32 = 4096;

}  // namespace gatecheck::test
