#include "case_spec.h"

#include <cmath>
#include <stdexcept>

#include "case_json.h"

namespace gatecheck {

namespace {
struct SplitMix64 {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  double normal() {  // Box-Muller; deterministic given the seed
    const double u1 = 1.0 - uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
};
}  // namespace

Case case_from_spec(const CaseSpec& s) {
  if (s.rows < 0 || s.dim < 0 || s.gates < 0)
    throw std::invalid_argument("generator spec: rows, dim and gates must be >= 0");
  if (s.gates == 0 && s.rows > 0) throw std::invalid_argument("generator spec: gates = 0 with rows > 0");
  const int64_t n = checked_elements(s.rows, s.dim), ng = checked_elements(s.gates, s.dim);
  if (n < 0 || n > kMaxCaseElements || ng < 0 || ng > kMaxCaseElements)
    throw std::invalid_argument("generator spec: " + std::to_string(s.rows) + "x" + std::to_string(s.dim) +
                                " is larger than the " + std::to_string(kMaxCaseElements) + "-element limit");
  Case c = make_case(s.dtype, s.rows, s.dim, s.gates);
  c.index_pattern = s.index;
  c.value_class = s.values;
  SplitMix64 rng{s.seed};
  for (int64_t r = 0; r < s.rows; ++r) {
    int64_t k;
    if (s.index == "sorted") k = r * s.gates / s.rows;
    else if (s.index == "random") k = int64_t(rng.next() % uint64_t(s.gates));
    else if (s.index == "identity") k = r % s.gates;
    else if (s.index == "single") k = 0;
    else if (s.index == "reversed") k = (s.rows - 1 - r) * s.gates / s.rows;
    else throw std::invalid_argument("generator spec: unknown index pattern '" + s.index +
                                     "' (sorted, random, identity, single, reversed)");
    c.index[size_t(r)] = k;
  }
  auto fill = [&](HostTensor& t, double scale) {
    for (int64_t i = 0; i < t.numel(); ++i) {
      double v;
      if (s.values == "normal") v = rng.normal() * scale;
      else if (s.values == "small_int") v = double(int64_t(rng.next() % 7) - 3);
      else throw std::invalid_argument("generator spec: unknown value class '" + s.values + "' (normal, small_int)");
      t.set_value_rn(i, float(v));
    }
  };
  fill(c.res, 1.0);
  fill(c.gate, 0.1);
  fill(c.y, 1.0);
  fill(c.grad_out, 1.0);
  return c;
}

}  // namespace gatecheck
