// rmsnorm_modulate's float64 reference, one row at a time: the oracle's own
// arithmetic, shared by the whole-case reference (every row, every column:
// rmsnorm_modulate_reference.cpp) and the scale tier's sampled one (every row
// streamed, its out and dx kept only for sampled rows, its sums only at
// sampled columns: rmsnorm_modulate_sampled.cpp). The bounds' derivation is
// at the top of rmsnorm_modulate_rows.cpp and in docs/oracle.md. Internal to
// the oracle.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "oracle.h"
#include "oracle_elements.h"

namespace gatecheck {
namespace rms_oracle {

inline constexpr double u = 0x1p-24, tiny = 0x1p-150, e64 = 0x1p-52;

// value +- err (err: the implementation's error, slack: float64's), with
// overflow of an intermediate admitting Inf and NaN: peak bounds the fp32
// intermediates, peak_t those rounded to the dtype (n^ and RN_T(n^ f)).
Expected settled(DType t, double value, double err, double slack, double peak, double peak_t = 0);
// An element the oracle does not judge (accepted whatever it is).
Expected unsettled();

// A partial product of factors this large may overflow fp32 (a factor 2 of
// margin, as settled() takes, also covers a correct implementation's exact
// doubling, such as autograd's 2 x in the derivative of x^2).
inline bool may_overflow32(double peak) { return !(peak < 0x1p127); }

// An fp32 sum, in any order, of terms t_i known up to e_i each. A term added
// `either` comes from a row whose rstd^ may be +0: it is then +-0, or NaN
// where `may_nan`, instead of t_i +- e_i. The sum's exact part lies in the
// hull of the two choices of every such term: its midpoint (s) +- W.
struct InexactSum {
  int64_t n = 0;
  double s = 0, S = 0, E = 0, slack = 0, peak = 0, peak_t = 0, W = 0;
  bool poisoned = false, nan_ok = false;
  void add(double term, double err, double slack64, double term_peak, double term_peak_t = 0, bool either = false,
           bool may_nan = false) {
    if (!std::isfinite(term) || !std::isfinite(err) || !std::isfinite(slack64)) poisoned = true;
    ++n;
    if (either) {
      s += term / 2;
      W += std::fabs(term) / 2;
      nan_ok = nan_ok || may_nan;
    } else {
      s += term;
    }
    S += std::fabs(term);
    E += err;
    slack += slack64;
    peak = std::max(peak, term_peak);
    peak_t = std::max(peak_t, term_peak_t);
  }
  // The fp32 sum's own error (before any rounding to T). The terms that may
  // be +-0 instead count in S and E at their full size: a bound for either.
  double acc_err() const { return E + gamma_n(std::max<int64_t>(n - 1, 0)) * (S + E); }
  double slack64() const { return slack + double(n + 4) * e64 * S; }
  Expected expected(DType t) const {
    if (poisoned) return unsettled();
    if (n == 0) return Expected{};  // the empty sum: +0, bound 0
    const double acc = acc_err() + W, sl = slack64();
    const double last = t == DType::f32 ? 0 : ulp(t, std::fabs(s) + acc + sl) / 2;
    Expected e = settled(t, s, acc + last, sl, total_peak(), peak_t);
    e.or_nan = nan_ok;
    return e;
  }
  // A bound on every partial sum (and the sum) of the exact terms and errors.
  double total_peak() const { return std::max(peak, (S + E) * (1 + gamma_n(n))); }
};

// One row's inputs as exact doubles, each [dim]: x, grad_out, w, and the
// shift and scale rows of the row's gate.
struct RowIn {
  const double *x, *g, *w, *shift, *scale;
};

// Where a row's results go; null: not wanted. The sums are per column slot:
// column j adds to slot col_slot[j] (-1: to none; col_slot null: slot j).
// Without out and dx, a row reads x in full (its statistic) and the other
// inputs only at the columns with a slot.
struct RowSinks {
  Expected* out = nullptr;  // [dim]
  Expected* dx = nullptr;   // [dim]
  const int64_t* col_slot = nullptr;
  InexactSum* dweight = nullptr;
  InexactSum* dscale = nullptr;  // the row's gate's
  GateColumn* dshift = nullptr;  // the row's gate's
};

struct RowScratch {
  std::vector<double> A, eA, A_chain, f, n, en;
};

// Where a row's fp32 sum of squares stands against fp32's overflow
// (rmsnorm_modulate_row_overflow in op_oracles.h): may, must.
struct RowOverflow {
  bool may = false, must = false;
};
RowOverflow row_overflow(const double* x, int64_t dim, double eps);

void reference_row(DType t, int64_t dim, double eps, const RowIn& in, const RowSinks& s, RowScratch& scratch);

// A row's rstd, from its sum of squares (rmsnorm_modulate_rows.cpp).
struct Row {
  bool ok = false;       // its rstd is judged (else every element of the row is unsettled)
  // The fp32 sum of squares, or the mean square plus eps, may overflow in
  // some order: rstd^ is then +0 (rsqrt(Inf)), and the row's outputs may take
  // that outcome (out = shift, dx = +-0, ...) instead of their bounds.
  bool may_zero = false;
  bool must_overflow = false;  // the fp32 sum of squares overflows in every order
  double rho = 0;        // 1/sqrt(mean square + eps), float64
  double theta = 0;      // |rstd^/rho - 1| <= theta
  double rho_rel64 = 0;  // float64's relative error in rho
};

// The same in two parts, so that a row's columns can be split among threads:
// what every column of the row needs (its rstd's statistics and, with_c for
// dx, c = sum_j w d x, in column order), then columns [j0, j1) with the sums'
// terms added as reference_row adds them. Each sum still takes its terms in
// row order, so a case's columns on threads give reference_row's bits.
struct RowPrelude {
  Row row;
  InexactSum csum;      // c's terms, their errors and float64's
  bool wd_nan = false;  // some w d, formed first, may overflow
};
RowPrelude row_prelude(DType t, int64_t dim, double eps, const RowIn& in, bool with_c);
void reference_row_columns(DType t, int64_t dim, const RowIn& in, const RowSinks& s, RowScratch& scratch,
                           const RowPrelude& pre, int64_t j0, int64_t j1);

}  // namespace rms_oracle
}  // namespace gatecheck
