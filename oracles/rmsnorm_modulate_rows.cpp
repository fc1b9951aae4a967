// rmsnorm_modulate's float64 reference, one row at a time (rmsnorm_modulate_rows.h):
// every element's exact value and a rigorous bound for a correct fp32 implementation in the case's dtype T
// (derivation: docs/oracle.md, "rmsnorm_modulate"). Written apart from the
// kernels: only the dtype's rounding (RN_T of 1 + scale, which the op's
// formula rounds on purpose) comes from the contract's dtype header.
//
// Notation as in gate_residual_reference.cpp: u = 2^-24, RN_T, ulp_T,
// gamma_n = n u / (1 - n u), thr = overflow_threshold. Every fp32 rounding of
// an exact v errs by at most u|v| + 2^-150 (the second term covers fp32's
// subnormals), and an error of 2^-150 made early in a chain of products is
// multiplied by at most the product of (1 + |factor|)(1 + u) of the factors
// after it; `tiny_chain` bounds that for any order of the factors.
//
// Model of a correct implementation (what the bounds admit):
//   rstd^: sum of squares in fp32 in any order; divided by dim (or
//          multiplied by a rounded 1/dim); plus eps, rounded; an rsqrt
//          within kRsqrtUlps fp32 ulps (CUDA's rsqrtf is within 2; 1/sqrtf
//          is within 2u relative, less). So rstd^ = rstd (1 + theta),
//          |theta| <= Theta, per row.
//   n^ = RN_T(w * rstd^ * x) with two fp32 products in any order;
//   out = RN_T(RN_T(n^ * f) + shift), f = RN_T(fl32(1 + scale)) (exact:
//          the oracle computes f itself, as the formula rounds it);
//   d = fl32(g * f); dx = RN_T(A^ - B^) with A = rstd w d (at most 5 fp32
//          roundings) and B = x rstd^3 c / dim (at most 8 roundings), where
//          c = sum_j w d x is an fp32 sum in any order; any factoring of
//          rstd is covered, as each term's bound carries its factors' error;
//   dweight, dscale: fp32 sums in any order of fp32 terms (d x rstd^;
//          g n^, with n^ rounded to T or not), rounded once to T;
//   dshift: an fp32 sum of g, judged by grad_gate's bound (GateColumn).
// Each bound is (the terms' errors) + gamma_{n-1} (sum of |terms| + their
// errors) + the last rounding at the result's magnitude: an absolute bound
// from the sum of absolute terms, so it holds where terms cancel (dx).
// Float64's own roundings are added explicitly (slack64) and then
// kBoundMargin as everywhere.
//
// A row whose fp32 sum of squares, or mean square plus eps, may overflow
// (Row::may_zero: the huge class) is judged with two outcomes, as the
// contract allows: rstd^ = +0 (an unscaled implementation whose sum
// overflowed; rsqrt(Inf) = +0), or the bounds above (its sum did not
// overflow, or the implementation scaled the row). With rstd^ = +0,
// out = shift exactly (a zero of either sign where shift is one), dx = +-0,
// and the row's terms of dweight and dscale are +-0; each of these is NaN
// instead where a partial product of its other factors may overflow first
// (Inf * 0) or c^ may. dweight and dscale then take the hull of both choices
// of every such term (InexactSum). dshift (a sum of g) does not see rstd.
//
// Not judged (honestly loose): an element whose inputs hold a NaN or an Inf
// (or whose f = RN_T(1 + scale) is Inf), or whose row's rstd error is not
// small (eps and the mean square both near fp32's underflow), is accepted
// whatever it is (kind finite_or_overflow, infinite bound). An element whose
// intermediate may overflow fp32 or T accepts Inf and NaN, and a finite
// result must still be within its bound (or be the rstd^ = +0 outcome); the
// intermediates of a product of several factors are its partial products in
// any order (chain_peak), so a huge w times a zero gradient may give NaN.
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <vector>

#include "rmsnorm_modulate_rows.h"

namespace gatecheck {
namespace rms_oracle {

namespace {

constexpr int kRsqrtUlps = 2;

double pw(double b, int n) {
  double r = 1;
  for (int i = 0; i < n; ++i) r *= b;
  return r;
}

// A bound on every partial product of these factors' magnitudes, in any
// order (and on the whole product): a product of k fp32 factors computed in
// any order may overflow at a partial product even where the whole is small
// (rstd * w past fp32's largest, times a zero gradient, is NaN).
double chain_peak(std::initializer_list<double> mags) {
  double p = 1;
  for (double m : mags) p *= std::max(1.0, m);
  return p;
}

// Propagated underflow of `steps` fp32 roundings among factors whose
// magnitudes' (1 + |f|) product is `prod1p`.
double tiny_chain(int steps, double prod1p) { return steps * tiny * prod1p * pw(1 + u, steps); }

// An fp32 operation of exact result magnitude <= mag, then RN_T.
double step_to_t(DType t, double mag) {
  const double e32 = u * mag + tiny;
  return t == DType::f32 ? e32 : e32 + ulp(t, mag + e32) / 2;
}


// value +- err (err: the implementation's error, slack: float64's), with
// overflow of an intermediate admitting Inf and NaN: peak bounds the fp32
// intermediates, peak_t those rounded to the dtype (n^ and RN_T(n^ f)).
}  // namespace

Expected settled(DType t, double value, double err, double slack, double peak, double peak_t) {
  if (!std::isfinite(value) || !std::isfinite(err) || !std::isfinite(slack) || !std::isfinite(peak) ||
      !std::isfinite(peak_t))
    return unsettled();
  Expected e;
  e.value = value;
  e.bound = (err + slack) * kBoundMargin;
  if (peak >= 0x1p127 || peak_t >= overflow_threshold(t) || std::fabs(value) + e.bound >= overflow_threshold(t))
    e.kind = Expected::finite_or_overflow;
  return e;
}

Expected unsettled() {
  Expected e;
  e.kind = Expected::finite_or_overflow;
  e.bound = std::numeric_limits<double>::infinity();
  return e;
}

namespace {


// rstd^ = fl(rsqrt(fl(fl(ss^ / dim) + eps))) against rho.
Row row_stats(const double* x, int64_t dim, double eps) {
  Row row;
  double ss = 0, e_prod = 0, ss_low = 0;  // ss_low: sum_j min(x_j^2, fl(x_j^2))
  bool square_inf = false;                // some fl(x_j^2) is Inf
  for (int64_t j = 0; j < dim; ++j) {
    const double v = x[j], sq = v * v;  // exact (F1)
    if (!std::isfinite(v)) return row;
    ss += sq;
    if (!representable(DType::f32, sq)) e_prod += u * sq + tiny;
    const double fl_sq = double(float(sq));  // RN to fp32, Inf at or past thr
    square_inf = square_inf || std::isinf(fl_sq);
    ss_low += std::min(sq, fl_sq);
  }
  const double D = double(dim);
  const double err64 = D * e64 * ss;  // the float64 sum of non-negative terms
  const double e_ss = e_prod + gamma_n(dim - 1) * (ss + err64 + e_prod) + err64;
  const double ss_hi = ss + e_ss;
  // Without overflow, every partial sum and its exact value before rounding
  // are at most ss_hi (1 + 2u), and the mean square plus eps before its last
  // rounding at most (ss_hi / D)(1 + u)^2 + eps; an fp32 operation overflows
  // only where that exact value reaches thr. (eps is an fp32 value, exact;
  // 4u and 2^-50 cover float64's roundings.)
  const double thr = overflow_threshold(DType::f32);
  row.may_zero = !(ss_hi * (1 + 4 * u) < thr && (ss_hi / D * (1 + 4 * u) + eps) * (1 + 0x1p-50) < thr);
  // Every order: a square that rounds to Inf makes the sum Inf (its terms
  // are non-negative and rounding is monotone; a fused x*x + acc too). Else,
  // were no operation to overflow, each of at most dim roundings (dim - 1
  // additions, or dim fused ones) would shrink a non-negative partial sum by
  // at most a factor (1 - u): the sum would be at least ss_lo =
  // (1 - dim u) sum_j min(x_j^2, fl(x_j^2)), and at or past thr it cannot be
  // finite. ((D + 4) e64 covers float64's roundings of ss_low and this line.)
  const double ss_lo = ss_low * (1 - D * u) * (1 - (D + 4) * e64);
  row.must_overflow = square_inf || ss_lo >= thr;
  const double em = e_ss / D * (1 + 3 * u) + 3 * u * ss_hi / D + tiny;
  const double a = ss / D + eps;
  const double ea = em + u * (a + em) + tiny;
  const double alpha = ea / a;
  if (!(alpha < 0.25)) return row;
  const double r_a = 1 / std::sqrt(1 - alpha) - 1;
  row.theta = ((1 + r_a) * (1 + 2 * kRsqrtUlps * u) - 1) * (1 + 0x1p-30);
  row.rho = 1 / std::sqrt(a);
  row.rho_rel64 = (D + 8) * e64;
  row.ok = std::isfinite(row.rho);
  return row;
}

double rn_t(DType t, double v) {
  const float f = float(v);
  return t == DType::f32 ? double(f) : double(bits_to_float(t, float_to_bits_rn(t, f)));
}

}  // namespace

RowOverflow row_overflow(const double* x, int64_t dim, double eps) {
  const Row row = row_stats(x, dim, eps);
  return {row.may_zero, row.must_overflow};
}

RowPrelude row_prelude(DType t, int64_t dim, double eps, const RowIn& in, bool with_c) {
  RowPrelude p;
  p.row = row_stats(in.x, dim, eps);
  if (!p.row.ok || !with_c) return p;
  // c = sum_j w d x: its exact value, the implementation's error, float64's.
  for (int64_t j = 0; j < dim; ++j) {
    const double xv = in.x[j], wv = in.w[j], gv = in.g[j];
    const double fv = rn_t(t, 1.0 + in.scale[j]), d = gv * fv;  // d exact (F1)
    // c's term w d x: up to 3 roundings.
    const double tc = wv * d * xv;
    p.wd_nan = p.wd_nan || may_overflow32(chain_peak({std::fabs(wv), std::fabs(gv), std::fabs(fv)}));
    p.csum.add(tc, std::fabs(tc) * (pw(1 + u, 3) - 1) +
                       tiny_chain(3, (1 + std::fabs(wv)) * (1 + std::fabs(gv)) * (1 + std::fabs(fv)) * (1 + std::fabs(xv))),
               2 * e64 * std::fabs(tc), chain_peak({std::fabs(wv), std::fabs(gv), std::fabs(fv), std::fabs(xv)}) * pw(1 + u, 3));
  }
  return p;
}

void reference_row(DType t, int64_t dim, double eps, const RowIn& in, const RowSinks& s, RowScratch& w_) {
  reference_row_columns(t, dim, in, s, w_, row_prelude(t, dim, eps, in, s.dx != nullptr), 0, dim);
}

void reference_row_columns(DType t, int64_t dim, const RowIn& in, const RowSinks& s, RowScratch& w_,
                           const RowPrelude& pre, int64_t j0, int64_t j1) {
  auto slot = [&](int64_t j) { return s.col_slot ? s.col_slot[j] : j; };
  const Row& row = pre.row;
  if (s.dshift)
    for (int64_t j = j0; j < j1; ++j)
      if (slot(j) >= 0) s.dshift[slot(j)].add(in.g[j]);
  if (!row.ok) {
    for (int64_t j = j0; j < j1; ++j) {
      if (s.out) s.out[j] = unsettled();
      if (s.dx) s.dx[j] = unsettled();
      if (slot(j) < 0) continue;
      if (s.dweight) s.dweight[slot(j)].poisoned = true;
      if (s.dscale) s.dscale[slot(j)].poisoned = true;
    }
    return;
  }
  std::vector<double>&A = w_.A, &eA = w_.eA, &A_chain = w_.A_chain, &f = w_.f, &n = w_.n, &en = w_.en;
  for (auto* v : {&A, &eA, &A_chain, &f, &n, &en}) v->resize(size_t(dim));
  const double rho = row.rho, th = row.theta, rho_hi = rho * (1 + th);
  const bool zero = row.may_zero;  // rstd^ may be +0 (Row::may_zero)
  const InexactSum& csum = pre.csum;  // c = sum_j w d x (row_prelude)
  const bool every_column = s.out || s.dx;
  for (int64_t j = j0; j < j1; ++j) {
    if (!every_column && slot(j) < 0) continue;  // (a streamed row: only its sums' columns are read)
    const double xv = in.x[j], wv = in.w[j], gv = in.g[j], hv = in.shift[j];
    f[size_t(j)] = rn_t(t, 1.0 + in.scale[j]);
    const double fv = f[size_t(j)], d = gv * fv;  // d exact (F1)
    // n = w rho x; n^ = RN_T(fl(fl(rstd^ x) w)) in any order.
    n[size_t(j)] = wv * rho * xv;
    const double an = std::fabs(n[size_t(j)]);
    const double en32 = an * ((1 + th) * pw(1 + u, 2) - 1) + tiny_chain(2, (1 + std::fabs(wv)) * (1 + std::fabs(xv)) * (1 + rho_hi));
    en[size_t(j)] = en32 + (t == DType::f32 ? 0 : ulp(t, an + en32) / 2);
    const double nf = n[size_t(j)] * fv, anf = std::fabs(nf);
    const double n_chain = chain_peak({std::fabs(wv), rho_hi, std::fabs(xv)}) * (1 + u);
    if (s.out) {  // out = RN_T(fl(RN_T(fl(n^ f)) + shift)).
      const double eq = std::fabs(fv) * en[size_t(j)] + step_to_t(t, anf + std::fabs(fv) * en[size_t(j)]);
      const double v = nf + hv;
      const double slack_out = (row.rho_rel64 + 0x1p-49) * (anf + std::fabs(hv));
      s.out[j] = settled(t, v, eq + step_to_t(t, std::fabs(v) + eq + slack_out), slack_out,
                         std::max((an + en32) * (1 + std::fabs(fv)), n_chain), std::max(an + en32, anf + eq));
    }
    // rstd^ = +0: n^ = +-0 (f is finite), so out = shift exactly (a zero of
    // either sign where shift is one), or NaN where w x, formed first, may
    // overflow (Inf * 0). (shift is a value of T: its bits come back exactly.)
    const bool n_nan = zero && may_overflow32(chain_peak({std::fabs(wv), std::fabs(xv)}));
    if (s.out && zero) {
      s.out[j].or_bits = true;
      s.out[j].bits = float_to_bits_rn(t, float(hv));
      s.out[j].or_nan = n_nan;
    }
    if (s.dx) {
      // A = rho w d, with up to 5 roundings (d's among them).
      A[size_t(j)] = rho * wv * d;
      A_chain[size_t(j)] = chain_peak({rho_hi, std::fabs(wv), std::fabs(gv), std::fabs(fv)}) * pw(1 + u, 5);
      const double aA = std::fabs(A[size_t(j)]);
      eA[size_t(j)] = aA * ((1 + th) * pw(1 + u, 5) - 1) +
                      tiny_chain(5, (1 + rho_hi) * (1 + std::fabs(wv)) * (1 + std::fabs(gv)) * (1 + std::fabs(fv)));
    }
    const int64_t k = slot(j);
    if (k < 0) continue;
    if (s.dweight) {  // dweight's term d x rho: up to 4 roundings (d's among them).
      const double tw = d * xv * rho;
      s.dweight[k].add(tw, std::fabs(tw) * ((1 + th) * pw(1 + u, 4) - 1) +
                               tiny_chain(4, (1 + std::fabs(gv)) * (1 + std::fabs(fv)) * (1 + std::fabs(xv)) * (1 + rho_hi)),
                       (row.rho_rel64 + 3 * e64) * std::fabs(tw),
                       chain_peak({std::fabs(gv), std::fabs(fv), std::fabs(xv), rho_hi}) * pw(1 + u, 4), 0, zero,
                       may_overflow32(chain_peak({std::fabs(gv), std::fabs(fv), std::fabs(xv)})));
    }
    if (s.dscale) {  // dscale's term g n, from n^ (rounded to T or not) and one fp32 product.
      const double ts = gv * n[size_t(j)], ags = std::fabs(gv) * en[size_t(j)];
      s.dscale[k].add(ts, ags + u * (std::fabs(ts) + ags) + tiny, (row.rho_rel64 + 3 * e64) * std::fabs(ts),
                      std::max(std::fabs(ts) + ags, n_chain * std::max(1.0, std::fabs(gv))) * (1 + u), an + en32, zero,
                      n_nan);
    }
  }
  if (!s.dx) return;
  // dx = RN_T(fl(A^ - B^)), B = x rho^3 c / dim with up to 8 roundings.
  const double cv = csum.s, Ec = csum.poisoned ? INFINITY : csum.acc_err(), Cabs = csum.S + csum.slack64();
  const double r3 = rho * rho * rho, r3_hi = pw(1 + th, 3) * r3, D = double(dim);
  // rstd^ = +0: A^ and B^ are products with a zero factor, +-0 unless c^
  // may overflow or a partial product of A's other factors (w d) may (then
  // a term of c may too), or a doubled x (autograd's 2 x): then Inf * 0 is
  // NaN. dx is +-0 or NaN. (x meets c only through rstd^3 c, as B's peak
  // above assumes.)
  const bool row_nan = zero && (csum.poisoned || may_overflow32(csum.total_peak()) || pre.wd_nan);
  for (int64_t j = j0; j < j1; ++j) {
    const double xv = in.x[j], ax = std::fabs(xv);
    const double B = xv * r3 * cv / D, aB = std::fabs(B), B_abs = ax * r3 * Cabs / D;
    const double eB = ax * r3_hi / D * (std::fabs(cv) + Ec) * pw(1 + u, 8) - aB +
                      tiny_chain(8, (1 + ax) * pw(1 + rho_hi, 3) * (1 + std::fabs(cv) + Ec) * (1 + 1 / D));
    const double v = A[size_t(j)] - B;
    const double slack = (3 * row.rho_rel64 + double(dim + 16) * e64) * (std::fabs(A[size_t(j)]) + B_abs) +
                         ax * r3 / D * double(dim + 4) * e64 * Cabs;
    const double err = eA[size_t(j)] + eB;
    const double peak = std::max({pw(rho_hi, 3) * std::max(1.0, ax) * std::max(1.0, std::fabs(cv) + Ec),
                                  std::fabs(A[size_t(j)]) + eA[size_t(j)], A_chain[size_t(j)], csum.peak});
    s.dx[j] = settled(t, v, err + step_to_t(t, std::fabs(v) + err + slack), slack, peak);
    if (zero) {  // bits 0: a zero of either sign
      s.dx[j].or_bits = true;
      s.dx[j].or_nan = row_nan || may_overflow32(ax);
    }
  }
}

}  // namespace rms_oracle
}  // namespace gatecheck
