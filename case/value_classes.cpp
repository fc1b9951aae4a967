// Value classes: what the tensors of a generated case hold (case_spec.h).
#include <algorithm>
#include <cmath>
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

enum class Role { res, gate, y, grad_out };

// The class, named once per tensor rather than compared by name per element.
enum class Cls { small_int, signed_zero, normal, mixed_magnitude, order_sensitive, subnormal, near_overflow, nan_inf };
Cls class_named(const std::string& cls) {
  static const std::pair<const char*, Cls> names[] = {
      {"small_int", Cls::small_int},           {"signed_zero", Cls::signed_zero}, {"normal", Cls::normal},
      {"mixed_magnitude", Cls::mixed_magnitude}, {"order_sensitive", Cls::order_sensitive},
      {"subnormal", Cls::subnormal},           {"near_overflow", Cls::near_overflow}, {"nan_inf", Cls::nan_inf}};
  for (const auto& [name, k] : names)
    if (cls == name) return k;
  throw std::invalid_argument("unknown value class '" + cls + "'");
}

void fill_tensor(HostTensor& t, Role role, const std::string& name, Prng& rng, int64_t cols) {
  const DType dt = t.dtype;
  const double mx = max_finite(dt);
  if (t.numel() == 0) return;  // (an empty tensor never asked what its class was)
  const Cls cls = class_named(name);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const int64_t col = cols ? i % cols : 0, row = cols ? i / cols : 0;
    double v = 0;
    if (cls == Cls::small_int) {
      v = double(rng.range(-4, 4));
    } else if (cls == Cls::signed_zero) {
      const int64_t k = rng.below(10);
      v = k < 3 ? 0.0 : k < 6 ? -0.0 : double(rng.range(-2, 2));
      if (v == 0 && rng.chance(0.5)) v = -0.0;
    } else if (cls == Cls::normal) {
      v = rng.normal() * (role == Role::gate ? 0.1 : 1.0);
    } else if (cls == Cls::mixed_magnitude) {
      const int lo = dt == DType::f16 ? -12 : -40, hi = dt == DType::f16 ? 7 : 40;
      v = rng.normal() * std::ldexp(1.0, int(rng.range(lo, hi)));
    } else if (cls == Cls::order_sensitive) {
      // y: per column a large L, rows alternately +L, -L and small; g ~ 1.
      // The big terms of grad_gate nearly cancel, so the small ones decide the
      // result, and fp32 absorbs them differently in every summation order.
      const int e = dt == DType::f16 ? 8 : 12 + int(col % 9);
      if (role == Role::y) {
        const int64_t m = row % 3;
        v = m == 0 ? std::ldexp(1.0, e) : m == 1 ? -std::ldexp(1.0, e) : rng.uniform() * 0.75 + 0.01;
      } else if (role == Role::grad_out) {
        v = rng.chance(0.9) ? 1.0 : 1.0 + std::ldexp(1.0, -int(rng.range(1, 6)));
      } else if (role == Role::gate) {
        v = rng.normal();
      } else {  // res cancels gate*y roughly: out is small and its rounding order shows
        v = -std::ldexp(1.0, e) * (rng.chance(0.5) ? 1 : -1) * rng.uniform();
      }
    } else if (cls == Cls::subnormal) {
      if (rng.chance(0.5)) {
        t.set_bits(i, subnormal_bits(dt, rng));
        continue;
      }
      v = role == Role::gate ? (0.5 + rng.uniform() * 1.5) * (rng.chance(0.5) ? 1 : -1)
                             : std::ldexp(1.0 + rng.uniform(), min_normal_exp(dt) + int(rng.range(0, 2))) *
                                   (rng.chance(0.5) ? 1 : -1);
    } else if (cls == Cls::near_overflow) {
      const double s = rng.chance(0.5) ? 1 : -1;
      v = role == Role::gate ? s * (0.5 + rng.uniform() * 1.5) : s * mx * (0.25 + 0.75 * rng.uniform());
      if (std::abs(v) > mx) v = s * mx;
    } else if (cls == Cls::nan_inf) {
      if (rng.chance(1.0 / 48)) {
        t.set_bits(i, special_bits(dt, int(rng.below(3))));
        continue;
      }
      v = rng.normal();
    }
    t.set_value_rn(i, float(v));
  }
}

// The "normal" class on threads: each element takes exactly two draws, so a
// piece starting at element i starts from the stream skipped by 2*i, and the
// result is bit for bit fill_tensor's. The prior art's 131072 x 5376 batches
// (gatecheck sweep) are 2.1 G normals, a minute or more on one core.
void fill_normal_threaded(HostTensor& t, Role role, Prng& rng) {
  constexpr int64_t kPiece = int64_t(1) << 20;
  const int64_t n = t.numel();
  const int64_t pieces = (n + kPiece - 1) / kPiece;
  const int64_t workers = std::min<int64_t>(pieces, std::max(1u, std::thread::hardware_concurrency()));
  const double scale = role == Role::gate ? 0.1 : 1.0;
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

// Large enough that threads pay for themselves.
constexpr int64_t kThreadedFillFrom = int64_t(1) << 22;

}  // namespace

void fill_values(Case* c, const std::string& cls, uint64_t seed) {
  Prng rng(seed);
  const std::pair<HostTensor*, Role> tensors[] = {
      {&c->res, Role::res}, {&c->gate, Role::gate}, {&c->y, Role::y}, {&c->grad_out, Role::grad_out}};
  for (const auto& [t, role] : tensors) {
    if (cls == "normal" && t->numel() >= kThreadedFillFrom) fill_normal_threaded(*t, role, rng);
    else fill_tensor(*t, role, cls, rng, c->dim);
  }
}


}  // namespace gatecheck
