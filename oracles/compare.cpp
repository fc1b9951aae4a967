// Comparators: every element of an output against the oracle (accuracy) or
// against another tensor (bitwise), with reports a person can act on.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "oracle.h"

namespace gatecheck {

namespace {

template <class... A>
std::string fmt(const char* f, A... a) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, a...);
  return buf;
}

std::string bits_hex(DType t, uint32_t b) {
  return t == DType::f32 ? fmt("0x%08" PRIx32, b) : fmt("0x%04" PRIx32, b);
}

bool is_nan_bits(DType t, uint32_t b) { return std::isnan(bits_to_float(t, b)); }

// Distance in units in the last place between two finite values of one dtype
// (their positions on the ordered line of representable values).
int64_t ulp_distance(DType t, uint32_t a, uint32_t b) {
  const int width = dtype_size(t) * 8;
  const uint32_t sign = 1u << (width - 1);
  auto ordered = [&](uint32_t x) -> int64_t {
    return (x & sign) ? -int64_t(x & (sign - 1)) : int64_t(x);
  };
  const int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

void record(Comparison& c, int64_t i, Mismatch m, bool nan, bool inf) {
  ++c.failed;
  if (nan) ++c.nan_failed;
  else if (inf) ++c.inf_failed;
  if (c.first_bad < 0) c.first_bad = i;
  c.last_bad = i;
  if (c.first.size() < kMaxMismatches) c.first.push_back(std::move(m));
}

Mismatch make_mismatch(const Comparison& c, int64_t i, uint32_t got_bits) {
  Mismatch m;
  m.tensor = c.tensor;
  m.row = c.cols > 0 ? i / c.cols : 0;
  m.col = c.cols > 0 ? i % c.cols : i;
  m.got_bits = got_bits;
  m.got = bits_to_float(c.dtype, got_bits);
  return m;
}

std::string num(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "+Inf" : "-Inf";
  if (x == 0) return std::signbit(x) ? "-0" : "+0";
  return fmt("%.9g", x);
}

// The other outcome an element may take (Expected::or_bits), for a report.
std::string alternative(DType t, const Expected& w) {
  const double v = bits_to_float(t, w.bits);
  return std::string(", nor the other allowed value ") + (v == 0 ? std::string("+-0") : num(v)) +
         (w.or_nan ? " or NaN" : "");
}

std::string shape_error(const HostTensor& got, int64_t want_n) {
  return fmt("shape [%" PRId64 ", %" PRId64 "] (%" PRId64 " elements), expected %" PRId64
             " elements",
             got.rows, got.cols, got.numel(), want_n);
}

}  // namespace

Comparison compare_accuracy(const std::string& tensor, const HostTensor& got,
                            const std::vector<Expected>& want) {
  Comparison c;
  c.tensor = tensor;
  c.dtype = got.dtype;
  c.cols = got.cols;
  const int64_t n = int64_t(want.size());
  if (got.numel() != n || got.bytes.size() != size_t(got.numel()) * size_t(dtype_size(got.dtype))) {
    Mismatch m;
    m.tensor = tensor;
    m.row = m.col = -1;
    m.why = shape_error(got, n);
    c.failed = std::max<int64_t>(n, 1);
    c.first.push_back(m);
    return c;
  }
  c.checked = n;
  for (int64_t i = 0; i < n; ++i) {
    const Expected& w = want[size_t(i)];
    const uint32_t b = got.bits(i);
    const double g = bits_to_float(got.dtype, b);
    // The Mismatch is built only for a failing element: this loop runs for
    // every element of every output.
    auto fail = [&](std::string why, bool nan, bool inf) {
      Mismatch m = make_mismatch(c, i, b);
      m.want = w.value;
      m.want_bits = w.bits;
      m.bound = w.bound;
      m.why = std::move(why);
      record(c, i, std::move(m), nan, inf);
    };
    if (w.bitwise) {
      if (b != w.bits)
        fail("must be a bitwise copy of " + bits_hex(got.dtype, w.bits) + " (" + num(w.value) + ")",
             std::isnan(g) || std::isnan(w.value), std::isinf(g) || std::isinf(w.value));
      continue;
    }
    if (std::isnan(g)) {
      if (w.kind == Expected::nan || w.kind == Expected::finite_or_overflow || w.kind == Expected::inf_or_nan ||
          w.or_nan)
        continue;
      fail(std::string("NaN, oracle expects ") + kind_name(w.kind), true, false);
      continue;
    }
    if (std::isinf(g)) {
      const bool pos = g > 0;
      const bool ok = (w.kind == Expected::pos_inf && pos) || (w.kind == Expected::neg_inf && !pos) ||
                      ((w.kind == Expected::finite_or_inf || w.kind == Expected::inf_or_nan) && pos == (w.value > 0)) ||
                      w.kind == Expected::finite_or_overflow;
      if (ok) continue;
      fail(std::string(pos ? "+Inf" : "-Inf") + ", oracle expects " +
               (w.kind == Expected::finite_or_inf ? std::string(w.value > 0 ? "finite or +Inf" : "finite or -Inf")
                                                  : std::string(kind_name(w.kind))),
           w.kind == Expected::nan, true);
      continue;
    }
    // got is finite
    if (w.or_bits && (b == w.bits || (g == 0 && bits_to_float(got.dtype, w.bits) == 0))) continue;
    if (w.kind == Expected::nan || w.kind == Expected::pos_inf || w.kind == Expected::neg_inf ||
        w.kind == Expected::inf_or_nan) {
      fail(std::string("finite, oracle expects ") + kind_name(w.kind), w.kind == Expected::nan,
           w.kind != Expected::nan);
      continue;
    }
    const double err = std::fabs(g - w.value);
    const double ratio = err == 0 ? 0 : w.bound > 0 ? err / w.bound : INFINITY;
    if (ratio > c.max_err_over_bound) c.max_err_over_bound = ratio;
    if (err > w.bound) {
      fail(fmt("|err| %.2g > bound", err) + (w.or_bits ? alternative(got.dtype, w) : std::string()), false, false);
    } else if (w.value == 0 && w.bound == 0 && std::signbit(g) != std::signbit(w.value)) {
      fail(std::string(std::signbit(g) ? "-0" : "+0") + " vs " + (std::signbit(w.value) ? "-0" : "+0") +
               ": an exact zero must carry its IEEE sign",
           false, false);
    }
  }
  return c;
}

Comparison compare_bitwise(const std::string& tensor, const HostTensor& got, const HostTensor& want,
                           bool nan_any) {
  Comparison c;
  c.tensor = tensor;
  c.dtype = got.dtype;
  c.cols = got.cols;
  c.bitwise = true;
  if (got.dtype != want.dtype || got.rows != want.rows || got.cols != want.cols) {
    Mismatch m;
    m.tensor = tensor;
    m.row = m.col = -1;
    m.why = fmt("%s [%" PRId64 ", %" PRId64 "] vs %s [%" PRId64 ", %" PRId64 "]", dtype_name(got.dtype),
                got.rows, got.cols, dtype_name(want.dtype), want.rows, want.cols);
    c.failed = std::max<int64_t>({got.numel(), want.numel(), 1});
    c.first.push_back(m);
    return c;
  }
  const int64_t n = got.numel();
  c.checked = n;
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t a = got.bits(i), b = want.bits(i);
    if (a == b) continue;
    const bool an = is_nan_bits(got.dtype, a), bn = is_nan_bits(got.dtype, b);
    if (nan_any && an && bn) continue;
    Mismatch m = make_mismatch(c, i, a);
    m.want_bits = b;
    m.want = bits_to_float(got.dtype, b);
    const bool ainf = std::isinf(m.got), binf = std::isinf(m.want);
    if (an && bn) m.why = "NaN payloads differ";
    else if (an || bn) m.why = "NaN vs number";
    else if (m.got == 0 && m.want == 0) m.why = "+0 vs -0";
    else if (ainf || binf) m.why = "Inf differs";
    else m.why = fmt("%" PRId64 " ulp apart", ulp_distance(got.dtype, a, b));
    record(c, i, m, an || bn, ainf || binf);
  }
  return c;
}

std::string Comparison::summary() const {
  std::ostringstream s;
  auto pos = [&](int64_t i) {
    return cols > 0 ? fmt("[%" PRId64 ",%" PRId64 "]", i / cols, i % cols) : fmt("[%" PRId64 "]", i);
  };
  auto detail = [&](const Mismatch& m) {
    if (m.row < 0) return m.why;  // the whole tensor is wrong (shape or dtype)
    std::string d = fmt("[%" PRId64 ",%" PRId64 "]: ", m.row, m.col) + (bitwise ? got_side : std::string("got")) +
                    " " + bits_hex(dtype, m.got_bits) + " (" + num(m.got) + "), ";
    if (bitwise)
      d += want_side + " " + bits_hex(dtype, m.want_bits) + " (" + num(m.want) + ")";
    else
      d += "oracle " + num(m.want) + fmt(" \u00b1 %.2g", m.bound);
    return d + " (" + m.why + ")";
  };
  if (ok()) {
    s << "[" << tensor << "] all " << checked << " elements ok";
    if (!bitwise) s << fmt(" (max |err|/bound %.3g)", max_err_over_bound);
    return s.str();
  }
  s << "[" << tensor << "] " << failed << " of " << checked << " elements wrong";
  if (first_bad >= 0) s << " (first " << pos(first_bad) << ", last " << pos(last_bad) << ")";
  if (!first.empty()) s << "; " << detail(first[0]);
  if (nan_failed || inf_failed || !bitwise) {
    s << "\n  " << nan_failed << " NaN and " << inf_failed << " Inf mismatches";
    // When every failure is a NaN or an Inf, the ratio speaks of the other elements only:
    // "max |err|/bound 0" alone read as if the wrong ones were exact.
    if (!bitwise)
      s << fmt(failed == nan_failed + inf_failed ? "; the finite elements: max |err|/bound %.3g"
                                                 : ", max |err|/bound %.3g",
               max_err_over_bound);
  }
  for (size_t k = 1; k < first.size(); ++k) s << "\n  " << detail(first[k]);
  if (failed > int64_t(first.size()) && !first.empty())
    s << "\n  ... and " << (failed - int64_t(first.size())) << " more";
  return s.str();
}

}  // namespace gatecheck
