// Properties of the three storage formats that the bounds are built from:
// precision, ulp, the overflow threshold and exact representability.
#include <cmath>
#include <cstring>
#include <limits>

#include "oracle.h"

namespace gatecheck {

int precision_bits(DType t) { return t == DType::f32 ? 24 : t == DType::f16 ? 11 : 8; }

namespace {
// Exponent of the smallest normal binade: bf16 shares fp32's exponent range.
int min_exponent(DType t) { return t == DType::f16 ? -14 : -126; }
int max_exponent(DType t) { return t == DType::f16 ? 15 : 127; }
}  // namespace

double ulp(DType t, double x) {
  if (std::isnan(x)) return x;
  if (std::isinf(x)) return std::numeric_limits<double>::infinity();
  // The binade from the float64 exponent field (a zero or float64-subnormal
  // x reads as below emin and is clamped); the result 2^(e-p+1) >= 2^-149
  // is a normal float64, built from its exponent field. Cheaper than
  // ilogb/ldexp, and this runs for every element.
  uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  int e = int((u >> 52) & 0x7ff) - 1023;
  if (e < min_exponent(t)) e = min_exponent(t);
  const uint64_t r = uint64_t(e - precision_bits(t) + 1 + 1023) << 52;
  double out;
  std::memcpy(&out, &r, sizeof out);
  return out;
}

// Round to nearest even sends |x| to Inf exactly when |x| >= max + ulp(max)/2:
// at the midpoint the tie goes to the even neighbour, and max's last bit is odd.
double overflow_threshold(DType t) {
  static const auto compute = [](DType d) {
    const int e = max_exponent(d), p = precision_bits(d);
    const double max = std::ldexp(2.0 - std::ldexp(1.0, 1 - p), e);
    return max + std::ldexp(1.0, e - p);
  };
  static const double thr[3] = {compute(DType::f32), compute(DType::f16), compute(DType::bf16)};
  return thr[int(t)];
}

bool representable(DType t, double x) {
  if (!std::isfinite(x)) return false;
  const float f = float(x);  // every dtype is a subset of fp32
  if (double(f) != x) return false;
  return bits_to_float(t, float_to_bits_rn(t, f)) == f;
}

// Higham's gamma_n for fp32 round to nearest (u = 2^-24): n additions in any
// order move a sum by at most gamma_n * sum|operands|.
double gamma_n(int64_t n) {
  const double nu = double(n) * std::ldexp(1.0, -24);
  if (nu >= 1) return std::numeric_limits<double>::infinity();
  return nu / (1 - nu);
}

}  // namespace gatecheck
