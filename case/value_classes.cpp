// Value classes: what the tensors of a generated case hold (case_spec.h).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include "case_spec.h"
#include "prng.h"

namespace gatecheck {

namespace {

double max_finite(DType t) {
  switch (t) {
    case DType::f32: return 3.4028234663852886e38;
    case DType::f16: return 65504.0;
    default: return 3.3895313892515355e38;
  }
}
int min_normal_exp(DType t) { return t == DType::f16 ? -14 : -126; }
// The standard deviation of a normal value of a tensor of this fill.
double normal_scale(Fill role) { return role == Fill::small_factor ? 0.1 : 1.0; }

// A random subnormal of the dtype, by bits.
uint32_t subnormal_bits(DType t, Prng& rng) {
  const uint32_t sign = rng.chance(0.5) ? 1u : 0u;
  switch (t) {
    case DType::f32: return (sign << 31) | uint32_t(1 + rng.below(0x7fffff));
    case DType::f16: return (sign << 15) | uint32_t(1 + rng.below(0x3ff));
    default: return (sign << 15) | uint32_t(1 + rng.below(0x7f));
  }
}

uint32_t special_bits(DType t, int which) {  // 0 NaN, 1 +Inf, 2 -Inf
  if (t == DType::f32) return which == 0 ? 0x7fc00000u : which == 1 ? 0x7f800000u : 0xff800000u;
  if (t == DType::f16) return which == 0 ? 0x7e00u : which == 1 ? 0x7c00u : 0xfc00u;
  return which == 0 ? 0x7fc0u : which == 1 ? 0x7f80u : 0xff80u;
}

// The class, named once per tensor rather than compared by name per element.
enum class Cls {
  small_int, signed_zero, normal, mixed_magnitude, order_sensitive, subnormal, near_overflow, nan_inf,
  binade_span, zero_rows, huge  // the ops' own (OpSchema::extra_value_classes)
};
Cls class_named(const std::string& cls) {
  static const std::pair<const char*, Cls> names[] = {
      {"small_int", Cls::small_int},           {"signed_zero", Cls::signed_zero}, {"normal", Cls::normal},
      {"mixed_magnitude", Cls::mixed_magnitude}, {"order_sensitive", Cls::order_sensitive},
      {"subnormal", Cls::subnormal},           {"near_overflow", Cls::near_overflow}, {"nan_inf", Cls::nan_inf},
      {"binade_span", Cls::binade_span},       {"zero_rows", Cls::zero_rows},     {"huge", Cls::huge}};
  for (const auto& [name, k] : names)
    if (cls == name) return k;
  throw std::invalid_argument("unknown value class '" + cls + "'");
}

// Element by element in order, f(row, col) giving each element's bits: the
// row and column kept as counters (no division an element) and the store
// typed once a tensor (no dtype test an element).
template <class F>
void fill_each(HostTensor& t, int64_t cols, F&& f) {
  const int64_t n = t.numel();
  int64_t row = 0, col = 0;
  auto next = [&] {
    if (cols && ++col == cols) {
      col = 0;
      ++row;
    }
  };
  uint8_t* p = t.bytes.data();
  if (t.dtype == DType::f32) {
    for (int64_t i = 0; i < n; ++i, next()) {
      const uint32_t b = f(row, col);
      std::memcpy(p + 4 * i, &b, 4);
    }
  } else {
    for (int64_t i = 0; i < n; ++i, next()) {
      const uint16_t h = uint16_t(f(row, col));
      std::memcpy(p + 2 * i, &h, 2);
    }
  }
}

// batch_rows: t holds rows of the batch (Role::row), whose rows zero_rows may
// zero; a column or table tensor keeps its values. Each class is a loop of
// its own. Every draw is a statement of its own, in a fixed order: C++ leaves
// the order of a call's arguments and of an operator's operands open, and
// where two draws shared an expression g++ and clang++ drew them in opposite
// orders, so the libFuzzer build (clang) made other values than the CLI (g++)
// from the same seed. The order kept is g++'s, so that what it generated
// before stays the same.
void fill_tensor(HostTensor& t, Fill role, const std::string& name, Prng& rng, int64_t cols, bool batch_rows) {
  const DType dt = t.dtype;
  const double mx = max_finite(dt);
  if (t.numel() == 0) return;  // (an empty tensor never asked what its class was)
  const Cls cls = class_named(name);
  auto rn = [dt](double v) { return float_to_bits_rn(dt, float(v)); };
  switch (cls) {
    case Cls::small_int:
      return fill_each(t, cols, [&](int64_t, int64_t) { return rn(double(rng.range(-4, 4))); });
    case Cls::signed_zero:
      return fill_each(t, cols, [&](int64_t, int64_t) {
        const int64_t k = rng.below(10);
        double v = k < 3 ? 0.0 : k < 6 ? -0.0 : double(rng.range(-2, 2));
        if (v == 0 && rng.chance(0.5)) v = -0.0;
        return rn(v);
      });
    case Cls::normal: {
      const double scale = normal_scale(role);  // once, not an element at a time
      return fill_each(t, cols, [&](int64_t, int64_t) { return rn(rng.normal() * scale); });
    }
    case Cls::mixed_magnitude: {
      const int lo = dt == DType::f16 ? -12 : -40, hi = dt == DType::f16 ? 7 : 40;
      return fill_each(t, cols, [&](int64_t, int64_t) {
        const double v = rng.normal();  // (drawn before the exponent, as ever)
        return rn(v * std::ldexp(1.0, int(rng.range(lo, hi))));
      });
    }
    case Cls::order_sensitive:
      // y: per column a large L, rows alternately +L, -L and small; g ~ 1.
      // The big terms of grad_gate nearly cancel, so the small ones decide the
      // result, and fp32 absorbs them differently in every summation order.
      return fill_each(t, cols, [&](int64_t row, int64_t col) {
        const int e = dt == DType::f16 ? 8 : 12 + int(col % 9);
        double v;
        if (role == Fill::factor) {
          const int64_t m = row % 3;
          v = m == 0 ? std::ldexp(1.0, e) : m == 1 ? -std::ldexp(1.0, e) : rng.uniform() * 0.75 + 0.01;
        } else if (role == Fill::upstream) {
          v = rng.chance(0.9) ? 1.0 : 1.0 + std::ldexp(1.0, -int(rng.range(1, 6)));
        } else if (role == Fill::small_factor) {
          v = rng.normal();
        } else {  // res cancels gate*y roughly: out is small and its rounding order shows
          const double s = rng.chance(0.5) ? 1 : -1;
          v = -std::ldexp(1.0, e) * s * rng.uniform();
        }
        return rn(v);
      });
    case Cls::subnormal:
      return fill_each(t, cols, [&](int64_t, int64_t) {
        if (rng.chance(0.5)) return subnormal_bits(dt, rng);
        if (role == Fill::small_factor) {
          const double u = rng.uniform();
          const double s = rng.chance(0.5) ? 1 : -1;
          return rn((0.5 + u * 1.5) * s);
        }
        const int e = int(rng.range(0, 2));
        const double u = rng.uniform();
        const double s = rng.chance(0.5) ? 1 : -1;
        return rn(std::ldexp(1.0 + u, min_normal_exp(dt) + e) * s);
      });
    case Cls::near_overflow:
      return fill_each(t, cols, [&](int64_t, int64_t) {
        const double s = rng.chance(0.5) ? 1 : -1;
        double v = role == Fill::small_factor ? s * (0.5 + rng.uniform() * 1.5) : s * mx * (0.25 + 0.75 * rng.uniform());
        if (std::abs(v) > mx) v = s * mx;
        return rn(v);
      });
    case Cls::binade_span: {
      // A factor's row: a few large elements among many small ones over a
      // dozen binades, so that a reduction of the row absorbs the small ones
      // differently in every order. Other tensors: N(0,1).
      const int big = dt == DType::f16 ? 7 : 12, span = dt == DType::f16 ? 10 : 14;
      return fill_each(t, cols, [&](int64_t, int64_t) {
        if (role != Fill::factor) return rn(rng.normal());
        const double s = rng.chance(0.5) ? 1 : -1;
        if (rng.chance(1.0 / 16)) return rn(s * std::ldexp(1.0 + rng.uniform(), big));
        const int e = -int(rng.range(0, span));
        const double u = rng.uniform();
        return rn(s * std::ldexp(1.0 + u, e));
      });
    }
    case Cls::zero_rows: {
      // A factor's rows of the batch are all +-0 one time in three (a row
      // statistic of nothing); the rest, and every other tensor, N(0,1).
      // Which rows are zero follows the seed (a salt per tensor), not the
      // row's number alone.
      const uint64_t zero_salt = rng.next();
      return fill_each(t, cols, [&](int64_t row, int64_t) {
        if (role == Fill::factor && batch_rows && Prng(zero_salt ^ (uint64_t(row) * 0x9e3779b97f4a7c15ull)).below(3) == 0)
          return rn(rng.chance(0.5) ? 0.0 : -0.0);
        return rn(rng.normal());
      });
    }
    case Cls::huge:
      // A factor far past sqrt(fp32's largest): its square overflows fp32
      // (bf16, f32; an f16 factor near its own largest). Others N(0,1).
      return fill_each(t, cols, [&](int64_t, int64_t) {
        if (role != Fill::factor) return rn(rng.normal());
        const double s = rng.chance(0.5) ? 1 : -1;
        if (dt == DType::f16) return rn(s * mx * (0.5 + 0.5 * rng.uniform()));
        const int e = int(rng.range(64, 100));
        const double u = rng.uniform();
        return rn(s * std::ldexp(1.0 + u, e));
      });
    case Cls::nan_inf:
      return fill_each(t, cols, [&](int64_t, int64_t) {
        if (rng.chance(1.0 / 48)) return special_bits(dt, int(rng.below(3)));
        return rn(rng.normal());
      });
  }
}

// The "normal" class on threads: each element takes exactly two draws, so a
// piece starting at element i starts from the stream skipped by 2*i, and the
// result is bit for bit fill_tensor's. The prior art's 131072 x 5376 batches
// (gatecheck sweep) are 2.1 G normals, a minute or more on one core.
void fill_normal_threaded(HostTensor& t, Fill role, Prng& rng) {
  constexpr int64_t kPiece = int64_t(1) << 20;
  const int64_t n = t.numel();
  const int64_t pieces = (n + kPiece - 1) / kPiece;
  const int64_t workers = std::min<int64_t>(pieces, std::max(1u, std::thread::hardware_concurrency()));
  const double scale = normal_scale(role);
  std::vector<std::thread> pool;
  for (int64_t w = 0; w < workers; ++w)
    pool.emplace_back([&, w] {
      for (int64_t p = w; p < pieces; p += workers) {
        Prng r = rng;
        r.skip(uint64_t(2 * p * kPiece));
        for (int64_t i = p * kPiece, end = std::min(n, (p + 1) * kPiece); i < end; ++i)
          t.set_value_rn(i, float(r.normal() * scale));
      }
    });
  for (auto& th : pool) th.join();
  rng.skip(uint64_t(2 * n));
}

// The op's scalars: the default half the time, else a typical value or,
// where the op says, one near the mean square of a row of the input it is
// added to. Rounded to fp32, the precision an implementation computes with.
void draw_scalars(Case* c, Prng& rng) {
  for (size_t i = 0; i < c->op->scalars.size(); ++i) {
    const OpScalar& s = c->op->scalars[i];
    double v = s.default_value;
    const int from = c->op->float_input(s.relative_to ? s.relative_to : "");
    const uint64_t pick = rng.below(4);
    if (pick == 1 && !s.typical.empty()) {
      v = s.typical[size_t(rng.below(uint64_t(s.typical.size())))];
    } else if (pick >= 2 && from >= 0 && c->rows > 0 && c->dim > 0) {
      const HostTensor& t = c->inputs[size_t(from)];
      const int64_t r = int64_t(rng.below(uint64_t(c->rows)));
      double ms = 0;
      for (int64_t j = 0; j < c->dim; ++j) {
        const double x = t.value(r * c->dim + j);
        ms += x * x;
      }
      ms /= double(c->dim);
      const double near = std::ldexp(ms, int(rng.range(-2, 2)));
      if (std::isfinite(near) && near > 0) v = near;
    }
    v = double(float(v));
    // (an fp32 underflow, or a mean square past fp32's largest)
    if (!std::isfinite(v) || (s.positive && !(v > 0))) v = s.default_value;
    c->scalars[i] = v;
  }
}

// Large enough that threads pay for themselves.
constexpr int64_t kThreadedFillFrom = int64_t(1) << 22;

}  // namespace

void fill_values(Case* c, const std::string& cls, uint64_t seed) {
  Prng rng(seed);
  size_t k = 0;
  for (const auto& in : c->op->inputs) {
    if (in.role == Role::index) continue;
    HostTensor* t = &c->inputs[k++];
    if (cls == "normal" && t->numel() >= kThreadedFillFrom) fill_normal_threaded(*t, in.fill, rng);
    else fill_tensor(*t, in.fill, cls, rng, c->dim, in.role == Role::row);
  }
  draw_scalars(c, rng);
}


}  // namespace gatecheck
