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

// An fp32 sum, in any order, of terms t_i known up to e_i each.
struct InexactSum {
  int64_t n = 0;
  double s = 0, S = 0, E = 0, slack = 0, peak = 0, peak_t = 0;
  bool poisoned = false;
  void add(double term, double err, double slack64, double term_peak, double term_peak_t = 0) {
    if (!std::isfinite(term) || !std::isfinite(err) || !std::isfinite(slack64)) poisoned = true;
    ++n;
    s += term;
    S += std::fabs(term);
    E += err;
    slack += slack64;
    peak = std::max(peak, term_peak);
    peak_t = std::max(peak_t, term_peak_t);
  }
  // The fp32 sum's own error (before any rounding to T).
  double acc_err() const { return E + gamma_n(std::max<int64_t>(n - 1, 0)) * (S + E); }
  double slack64() const { return slack + double(n + 4) * e64 * S; }
  Expected expected(DType t) const {
    if (poisoned) return unsettled();
    if (n == 0) return Expected{};  // the empty sum: +0, bound 0
    const double acc = acc_err(), sl = slack64();
    const double last = t == DType::f32 ? 0 : ulp(t, std::fabs(s) + acc + sl) / 2;
    return settled(t, s, acc + last, sl, std::max(peak, (S + E) * (1 + gamma_n(n))), peak_t);
  }
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

void reference_row(DType t, int64_t dim, double eps, const RowIn& in, const RowSinks& s, RowScratch& scratch);

}  // namespace rms_oracle
}  // namespace gatecheck
