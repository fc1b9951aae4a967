// The float64 oracle: exact values and rigorous per-element error bounds.
//
// Notation: T is the case's dtype with precision p (24, 11, 8 bits), RN_T is
// round to nearest even into T, ulp_T as in ulp() (subnormal spacing near 0),
// u = 2^-24 is fp32's unit roundoff, thr_T = overflow_threshold(T).
//
// Facts used throughout:
//  (F1) Inputs are T values, so as doubles they are exact, and a product of
//       two of them is exact in float64: 24+24 significand bits <= 53, and
//       the exponent range (2^-298 .. 2^256) is far inside float64's.
//  (F2) |RN_T(x) - x| <= ulp_T(x)/2, with ulp_T taken at the exact x (the
//       binade of x, or the subnormal spacing), and RN_T(x) = x when x is
//       representable. ulp_T is non-decreasing in |x|.
//  (F3) Float64 arithmetic used to evaluate the oracle itself rounds too.
//       Where a sum is not exact in float64 its error is added to the bound
//       (TwoSum for out; Higham's bound for grad_gate), and every bound is
//       finally multiplied by kBoundMargin = 1 + 2^-40, which covers the handful
//       of float64 roundings made while computing the bound and the
//       comparator's own |got - value| (each <= 2^-53 relative). The margin is
//       2^-16 of an fp32 ulp, so it never hides a whole ulp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "op_oracles.h"
#include "oracle_elements.h"

namespace gatecheck {

namespace {

Expected special_or(double v, Expected finite_e) {
  Expected e;
  if (std::isnan(v)) { e.value = v; e.kind = Expected::nan; return e; }
  if (std::isinf(v)) { e.value = v; e.kind = v > 0 ? Expected::pos_inf : Expected::neg_inf; return e; }
  return finite_e;
}

// Error-free transform (Knuth's TwoSum): s = fl(a+b) and a+b = s+err exactly.
double two_sum_err(double a, double b, double s) {
  const double bb = s - a;
  return (a - (s - bb)) + (b - bb);
}

}  // namespace

// out = RN_T(res + RN_T(gate*y))                     two roundings
//   p = gate*y (exact by F1); p^ = RN_T(p) with e_p = |p^ - p| <= ulp_T(p)/2,
//   and e_p = 0 when p is representable. The second rounding acts on
//   res + p^, which differs from v = res + p by at most e_p, so its error is
//   <= ulp_T(res + p^)/2 <= ulp_T(|v| + e_p)/2. Taking ulp at |v| + e_p rather
//   than at v is the binade-crossing case: v can sit just below 2^k while
//   res + p^ lands at or above 2^k, where the spacing is twice as large.
//   It is 0 when e_p = 0 and v is representable (both roundings exact).
//   Total: |out - v| <= ulp_T(|v| + e_p)/2 + e_p.
// A fused implementation, RN_T(v), has error <= ulp_T(v)/2 and also passes.
// v is evaluated in float64 as fl(res + p); TwoSum gives its rounding error
// e64 exactly, which is added to the bound (the comparison uses fl(v)).
// Overflow: p^ is Inf when |p| >= thr_T, and the second rounding overflows
// when |res + p^| >= thr_T, possible only when |v| + bound >= thr_T. In both
// cases the Inf has v's sign (|res| < thr_T <= |p| forces sign(v) = sign(p)),
// so kind finite_or_inf. Zero: v == 0 happens only as +-0 +- (+-0) or as an
// exact cancellation res = -p (so p is representable); both roundings are
// then exact and IEEE fixes the sign (-0 only for -0 + -0), which the float64
// evaluation reproduces, so bound 0 and the sign is checked.
Expected out_expected(DType t, double res, double gate, double y) {
  const double p = gate * y, v = res + p;
  Expected e;
  e.value = v;
  if (std::isinf(res) && std::isfinite(p) && std::fabs(p) >= overflow_threshold(t) &&
      std::signbit(p) != std::signbit(res)) {
    e.kind = Expected::inf_or_nan;  // RN_T(p) is the opposite Inf: res + RN_T(p) is NaN
    return e;
  }
  if (!std::isfinite(v)) return special_or(v, e);
  if (v == 0) return e;  // bound 0: exact, signed
  const double e64 = std::fabs(two_sum_err(res, p, v));
  const double e_p = representable(t, p) ? 0 : ulp(t, p) / 2;
  const double second =
      (e_p == 0 && e64 == 0 && representable(t, v)) ? 0 : ulp(t, std::fabs(v) + e_p + e64) / 2;
  e.bound = (second + e_p + e64) * kBoundMargin;
  const double thr = overflow_threshold(t);
  if (std::fabs(p) >= thr || std::fabs(v) + e.bound >= thr) e.kind = Expected::finite_or_inf;
  return e;
}

// grad_y = RN_T(g * gate)                            one rounding
//   v exact (F1); |RN_T(v) - v| <= ulp_T(v)/2, 0 when v is representable.
//   RN_T(v) is Inf exactly when |v| >= thr_T: finite_or_inf (sign of v).
//   v == 0 only when a factor is +-0: exact, with the IEEE sign (xor of signs).
Expected grad_y_expected(DType t, double g, double gate) {
  const double v = g * gate;
  Expected e;
  e.value = v;
  if (!std::isfinite(v)) return special_or(v, e);
  if (v == 0) return e;
  e.bound = representable(t, v) ? 0 : ulp(t, v) / 2 * kBoundMargin;
  if (std::fabs(v) >= overflow_threshold(t)) e.kind = Expected::finite_or_inf;
  return e;
}

// grad_res = g                                       exact: a copy, bit for bit
Expected grad_res_expected(DType t, uint32_t g_bits) {
  const double g = bits_to_float(t, g_bits);
  Expected e;
  e.value = g;
  e = special_or(g, e);
  e.bitwise = true;
  e.bits = g_bits;
  return e;
}

// Exponent of the lowest set bit of a finite non-zero double.
static int lowest_bit_exponent(double x) {
  int e;
  const double m = std::frexp(std::fabs(x), &e);  // x = m * 2^e, m in [0.5, 1)
  const uint64_t sig = uint64_t(std::ldexp(m, 53));  // exact 53-bit integer, non-zero
  return e - 53 + __builtin_ctzll(sig);
}

void GateColumn::add(double x) {
  ++n;
  s += x;
  const double ax = std::fabs(x);
  S += ax;
  if (std::isfinite(x)) S_finite += ax;
  if (x != 0 && std::isfinite(x)) q = std::min(q, lowest_bit_exponent(x));
  if (!representable(DType::f32, x)) e_prod += ax < 0x1p-126 ? 0x1p-150 : ax * 0x1p-24;
  static const double thr32 = overflow_threshold(DType::f32);
  term_overflow |= std::isfinite(x) && ax >= thr32;  // a finite term that fp32 cannot hold
}


// grad_gate[k,j] = RN_T(fp32 sum of the n terms t_i = g_i*y_i of gate k's rows)
//   Terms: t_i exact in float64 (F1). An implementation forms each term in
//   fp32: t^_i = t_i for bf16/fp16 (products of <= 11-bit significands fit in
//   fp32) except on fp32 underflow (bf16 only) or overflow; for fp32 one
//   product rounding. So |t^_i - t_i| <= d_i with d_i = 0 when t_i is an fp32
//   value, 2^-150 (half fp32's subnormal spacing) when |t_i| < 2^-126, and
//   u|t_i| otherwise. E_prod = sum d_i.
//   Accumulation: any order, i.e. any binary tree of n-1 fp32 additions
//   (leading additions to +0 are exact), moves the sum by at most
//   gamma_{n-1} * sum|t^_i| <= gamma_{n-1} (S + E_prod), S = sum|t_i|
//   (Higham, Accuracy and Stability, 2nd ed., eq. 4.4). So the fp32 result s^
//   has |s^ - s| <= E_acc = E_prod + gamma_{n-1} (S + E_prod). When every
//   product is inexact and normal this is u S + gamma_{n-1}(1+u) S <=
//   gamma_n S, the form in the issue.
//   Exact accumulation: if every term is a multiple of 2^q with q >= -149
//   and S <= 2^(q+24), every term and every partial sum in every order is a
//   multiple of 2^q no larger than 2^(q+24), hence an fp32 value: s^ = s.
//   (This makes small-integer cases exact.)
//   Final rounding: |RN_T(s^) - s^| <= ulp_T(|s| + E_acc)/2 (F2, monotone
//   ulp), 0 when s^ = s is representable in T.
//   Total: |grad_gate - s| <= ulp_T(|s| + E_acc)/2 + E_acc.
//   Float64 evaluation: s is summed in float64 in row order, which is off by
//   at most gamma64_{n-1} S; S is itself a float64 sum. Both are covered by
//   S_up = S (1 + n 2^-52) and err64 = n 2^-52 S_up (n 2^-52 >= gamma64_n for
//   any n this oracle meets); err64 = 0 in the exact case, where the float64
//   sums are exact too.
//   Special values: the float64 evaluation of the sum decides NaN (a NaN
//   term, 0*Inf, or Infs of both signs) and Inf (Infs of one sign); float64
//   never overflows here. With a finite exact sum, fp32 can still overflow:
//   a term >= thr_f32, or a partial sum, bounded by (1 + gamma_{n-1})(S +
//   E_prod). Then the outcome (+Inf, -Inf or NaN from +Inf + -Inf partials)
//   depends on the order: finite_or_overflow. If only the final rounding to T
//   can overflow (|s| + E_acc >= thr_T), the Inf has s's sign when |s| >
//   E_acc (finite_or_inf), else finite_or_overflow.
//   Zeros: no rows (n = 0) is the empty sum, +0 exactly (bound 0, signed).
//   When every term is +-0 the sign depends on the order (-0 + -0 = -0, but
//   +0 + -0 = +0 from a +0-initialised accumulator), so either zero passes
//   (bound ulp_T(0)/2 > 0 admits +-0 and nothing else). With a non-zero term,
//   an fp32 sum that is exactly zero is +0 in every order (round to nearest
//   turns an exact cancellation into +0, and -0 needs two -0 operands), so in
//   the exact case the bound is 0 and +0 is required.
Expected grad_gate_expected(DType t, const GateColumn& c) {
  Expected e;
  const int64_t n = c.n;
  if (n == 0) return e;  // +0, bound 0
  const double s = c.s, S = c.S;
  e.value = s;
  // An infinite sum (Infs of one sign among the inputs' terms) whose finite
  // terms may still overflow fp32 on their own, a term or a partial sum
  // rounding to the opposite Inf: Inf - Inf makes the fp32 result NaN in
  // some orders. Found by fuzz_gate_residual (f32, g*y = 2.0e38*1.5e38 next
  // to -1*Inf).
  if (std::isinf(s) &&
      (c.term_overflow ||
       c.S_finite * (1 + gamma_n(n - 1)) * (1 + double(n) * 0x1p-52) >= overflow_threshold(DType::f32))) {
    e.kind = Expected::inf_or_nan;
    return e;
  }
  if (!std::isfinite(s)) return special_or(s, e);
  if (S == 0) {  // every term is +-0
    e.value = 0;
    e.bound = ulp(t, 0) / 2;
    return e;
  }
  const double thr32 = overflow_threshold(DType::f32);
  double e_acc = 0, err64 = 0, partial_max = S;
  const bool exact_acc = c.q >= -149 && S <= std::ldexp(1.0, c.q + 24);
  if (!exact_acc) {
    const double nn = double(n) * 0x1p-52;
    const double s_up = S * (1 + nn);
    const double e_prod = c.e_prod * (1 + nn);  // the float64 sum of the d_i rounds too
    const double gam = gamma_n(n - 1);
    e_acc = e_prod + gam * (s_up + e_prod);
    err64 = nn * s_up;
    partial_max = (1 + gam) * (s_up + e_prod);
  }
  const double off = e_acc + err64;
  const double last =
      (off == 0 && representable(t, s)) ? 0 : ulp(t, std::fabs(s) + off) / 2;
  e.bound = (last + off) * kBoundMargin;
  if (c.term_overflow || partial_max >= thr32) {
    e.kind = Expected::finite_or_overflow;
  } else if (std::fabs(s) + off >= overflow_threshold(t)) {
    e.kind = std::fabs(s) > off ? Expected::finite_or_inf : Expected::finite_or_overflow;
  }
  return e;
}

Reference gate_residual_reference(const Case& c) {
  const DType t = c.dtype;
  const int64_t n = c.rows * c.dim;
  const HostTensor &res = c.input("res"), &gate = c.input("gate"), &y = c.input("y"), &grad_out = c.input("grad_out");
  Reference ref = Reference::shaped(c);
  std::vector<Expected>& out = ref["out"];
  std::vector<Expected>& grad_res = ref["grad_res"];
  std::vector<Expected>& grad_y = ref["grad_y"];
  std::vector<Expected>& grad_gate = ref["grad_gate"];
  (void)n;
  auto val = [](const HostTensor& h, int64_t i) { return double(h.value(i)); };
  for (int64_t r = 0; r < c.rows; ++r) {
    const int64_t gbase = c.index[size_t(r)] * c.dim;
    for (int64_t j = 0; j < c.dim; ++j) {
      const int64_t i = r * c.dim + j;
      out[size_t(i)] = out_expected(t, val(res, i), val(gate, gbase + j), val(y, i));
      grad_y[size_t(i)] = grad_y_expected(t, val(grad_out, i), val(gate, gbase + j));
      grad_res[size_t(i)] = grad_res_expected(t, grad_out.bits(i));
    }
  }
  // grad_gate terms, visited in row order (each column's float64 order).
  std::vector<GateColumn> cols(size_t(c.gates * c.dim));
  for (int64_t r = 0; r < c.rows; ++r) {
    GateColumn* acc = cols.data() + c.index[size_t(r)] * c.dim;
    for (int64_t j = 0; j < c.dim; ++j)
      acc[j].add(val(grad_out, r * c.dim + j) * val(y, r * c.dim + j));
  }
  for (size_t i = 0; i < cols.size(); ++i) grad_gate[i] = grad_gate_expected(t, cols[i]);
  return ref;
}

}  // namespace gatecheck
