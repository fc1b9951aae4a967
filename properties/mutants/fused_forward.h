// A fused forward: out = res + gate*y with ONE rounding into the dtype (as an
// FMA would give), instead of eager's two roundings (product, then sum). It is
// more accurate than eager, so it meets the oracle's accuracy bound, but it is
// not eager-exact. Used by the correct "fused" alternative and by the
// batch-size-dependent mutant, which takes this path only for large batches.
#pragma once

#include <cmath>

#include "../../kernels/gate_residual_dtype.h"
#include "mutant_abi.h"

namespace gatecheck::mutants {

// Rounds a double to float by round-to-odd (truncate, then set the last bit
// if inexact). A later round-to-nearest into a type with at least two fewer
// significand bits is then exactly the one rounding of the double.
inline float round_to_odd_float(double d) {
  float f = static_cast<float>(d);
  if (std::isnan(d) || std::isinf(d) || double(f) == d) return f;
  if (std::fabs(double(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
  return bits_float(float_bits(f) | 1u);
}

// fp32: fmaf is the one rounding.
inline float fused_out(float res, float gate, float y) { return round_to<float>(std::fma(gate, y, res)); }

// bf16/fp16: the product of two 8- or 11-bit significands is exact in double,
// and so is the sum unless the exponents are more than ~40 apart (then the
// double rounding sits far below the dtype's ulp).
template <class T>
T fused_out(T res, T gate, T y) {
  const double exact = double(to_float(gate)) * double(to_float(y)) + double(to_float(res));
  return round_to<T>(round_to_odd_float(exact));
}

// The whole forward with fused_out, after the host twin's validation. Shared
// by the correct fused alternative (every batch) and the batch-size mutant
// (large batches only).
inline Status fused_forward(const gatecheck_problem& p, const void* res, const void* gate,
                            const int64_t* index, const void* y, void* out) {
  Status s = check_fwd_args(p, res, gate, index, y, out, kCpuOnly, /*index_on_host=*/true);
  if (!s.ok()) return s;
  dispatch_dtype(DType(p.dtype), [&](auto tag) {
    using T = decltype(tag);
    auto* o = static_cast<T*>(out);
    auto* r = static_cast<const T*>(res);
    auto* g = static_cast<const T*>(gate);
    auto* v = static_cast<const T*>(y);
    for (int64_t i = 0; i < p.rows; ++i)
      for (int64_t j = 0; j < p.dim; ++j)
        o[i * p.dim + j] = fused_out(r[i * p.dim + j], g[index[i] * p.dim + j], v[i * p.dim + j]);
  });
  return Status::success();
}

}  // namespace gatecheck::mutants
