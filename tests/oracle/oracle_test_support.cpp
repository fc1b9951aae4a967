#include "oracle_test_support.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "kernels/gate_residual_math.h"

namespace gatecheck::testing {

const char* values_name(Values v) {
  switch (v) {
    case Values::normal: return "normal";
    case Values::small_int: return "small_int";
    case Values::mixed: return "mixed";
    case Values::subnormal: return "subnormal";
    case Values::near_overflow: return "near_overflow";
    case Values::cancelling: return "cancelling";
    case Values::specials: return "specials";
  }
  return "?";
}

namespace {

int min_exp(DType t) { return t == DType::f16 ? -14 : -126; }
int max_exp(DType t) { return t == DType::f16 ? 15 : 127; }

struct Gen {
  DType t;
  Values v;
  std::mt19937_64 rng;
  double normal() { return std::normal_distribution<double>(0, 1)(rng); }
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
  float value(bool is_gate) {
    switch (v) {
      case Values::normal: return float(normal() * (is_gate ? 0.1 : 1));
      case Values::small_int: return float(uniform(-4, 4));
      case Values::mixed: {
        const int span = t == DType::f16 ? 6 : 30;
        return float(std::ldexp(normal(), uniform(-span, span)));
      }
      case Values::subnormal: {
        // products of two such values underflow; sums stay near the subnormals
        const int e = min_exp(t);
        return float(std::ldexp(normal(), e + (is_gate ? uniform(-8, 2) : uniform(-2, 8) - e / 2 - 2)));
      }
      case Values::near_overflow: {
        const int e = max_exp(t);
        // gate*y near max; res near max with either sign
        (void)is_gate;
        return float(std::ldexp(1 + 0.5 * normal(), e / 2 + uniform(-1, 1)));
      }
      case Values::cancelling: {
        const double big = std::ldexp(1.0, t == DType::f16 ? 6 : 12);
        return float(uniform(0, 1) ? (uniform(0, 1) ? big : -big) * (1 + uniform(0, 3)) : normal());
      }
      case Values::specials: {
        const int pick = uniform(0, 99);
        if (pick == 0) return NAN;
        if (pick == 1) return uniform(0, 1) ? INFINITY : -INFINITY;
        if (pick == 2) return uniform(0, 1) ? 0.0f : -0.0f;
        return float(normal());
      }
    }
    return 0;
  }
  void fill(HostTensor& h, bool is_gate, bool res_near_max = false) {
    for (int64_t i = 0; i < h.numel(); ++i) {
      float x = value(is_gate);
      if (res_near_max)  // +-[0.95, 1.9] * 2^emax
        x = float(std::ldexp(uniform(0, 1) ? 1.9 : -1.9, max_exp(t)) * (0.5 + uniform(0, 8) / 16.0));
      h.set_value_rn(i, x);
    }
  }
};

}  // namespace

Case random_case(DType t, int64_t rows, int64_t dim, int64_t gates, Values v, uint64_t seed) {
  Case c = make_case(t, rows, dim, gates);
  c.value_class = values_name(v);
  Gen g{t, v, std::mt19937_64(seed)};
  for (auto& ix : c.index) ix = g.uniform(0, int(gates) - 1);
  g.fill(c.input("res"), false, v == Values::near_overflow);
  g.fill(c.input("gate"), true);
  g.fill(c.input("y"), false);
  g.fill(c.input("grad_out"), false);
  return c;
}

Outputs run_host(const Case& c) {
  Outputs o = outputs_for(c);
  const gatecheck_problem p = c.problem(Device::cpu);
  Status s = gate_residual_fwd_host(p, c.input("res").data(), c.input("gate").data(), c.index.data(), c.input("y").data(), o["out"].data());
  if (s.ok())
    s = gate_residual_bwd_host(p, c.input("grad_out").data(), c.input("gate").data(), c.index.data(), c.input("y").data(),
                               o["grad_res"].data(), o["grad_gate"].data(), o["grad_y"].data());
  if (!s.ok()) throw std::runtime_error("host twin rejected a valid case: " + s.message);
  return o;
}

uint32_t next_up(DType t, uint32_t b) {
  const uint32_t sign = t == DType::f32 ? 0x80000000u : 0x8000u;
  if (b == sign) return 1;  // -0 -> smallest positive subnormal
  return (b & sign) ? b - 1 : b + 1;
}
uint32_t next_down(DType t, uint32_t b) {
  const uint32_t sign = t == DType::f32 ? 0x80000000u : 0x8000u;
  if (b == 0) return sign | 1u;
  return (b & sign) ? b + 1 : b - 1;
}

uint32_t round_double(DType t, double x) {
  // Candidates around the (possibly double-rounded) fp32 route; pick the
  // nearest, ties to the even significand.
  if (std::fabs(x) >= overflow_threshold(t)) return float_to_bits_rn(t, x > 0 ? INFINITY : -INFINITY);
  const uint32_t c = float_to_bits_rn(t, float(x));
  uint32_t best = c;
  double best_d = INFINITY;
  for (uint32_t cand : {next_down(t, c), c, next_up(t, c)}) {
    const double v = bits_to_float(t, cand);
    if (std::isnan(v)) continue;
    const double d = std::fabs(v - x);
    if (d < best_d || (d == best_d && (cand & 1u) == 0)) { best = cand; best_d = d; }
  }
  return best;
}

HostTensor grad_gate_with_order(const Case& c, Order order) {
  HostTensor out(c.dtype, c.gates, c.dim);
  std::vector<std::vector<int64_t>> rows_of(size_t(c.gates));
  for (int64_t r = 0; r < c.rows; ++r) rows_of[size_t(c.index[size_t(r)])].push_back(r);
  std::vector<float> terms;
  for (int64_t k = 0; k < c.gates; ++k) {
    auto rows = rows_of[size_t(k)];
    if (order == Order::reversed) std::reverse(rows.begin(), rows.end());
    for (int64_t j = 0; j < c.dim; ++j) {
      if (order == Order::float64) {
        double s = 0;
        for (int64_t r : rows) s += double(c.input("grad_out").value(r * c.dim + j)) * c.input("y").value(r * c.dim + j);
        out.set_bits(k * c.dim + j, std::isfinite(s) ? round_double(c.dtype, s) : float_to_bits_rn(c.dtype, float(s)));
        continue;
      }
      terms.clear();
      for (int64_t r : rows) terms.push_back(c.input("grad_out").value(r * c.dim + j) * c.input("y").value(r * c.dim + j));
      float s = 0;
      if (order == Order::pairwise) {
        while (terms.size() > 1) {
          std::vector<float> next;
          for (size_t i = 0; i + 1 < terms.size(); i += 2) next.push_back(terms[i] + terms[i + 1]);
          if (terms.size() % 2) next.push_back(terms.back());
          terms.swap(next);
        }
        s = terms.empty() ? 0.0f : 0.0f + terms[0];
      } else {
        for (float x : terms) s += x;
      }
      out.set_value_rn(k * c.dim + j, s);
    }
  }
  return out;
}

}  // namespace gatecheck::testing
