// A small, fast, deterministic PRNG (splitmix64) for filling generated
// tensors from a seed. RapidCheck chooses the seeds (and shrinks the rest of
// the spec); this fills the elements, the same way on every machine.
#pragma once

#include <cmath>
#include <cstdint>

namespace gatecheck {

class Prng {
 public:
  explicit Prng(uint64_t seed) : s_(seed ^ 0x9e3779b97f4a7c15ull) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) (n > 0); the tiny modulo bias does not matter here.
  int64_t below(int64_t n) { return n <= 0 ? 0 : int64_t(next() % uint64_t(n)); }
  int64_t range(int64_t lo, int64_t hi) { return lo + below(hi - lo + 1); }  // [lo, hi]
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }              // [0, 1)
  bool chance(double p) { return uniform() < p; }
  // The state after k more draws: next() is a function of the draw's number,
  // so a long stream can be filled in parallel pieces, bit for bit the same.
  void skip(uint64_t k) { s_ += k * 0x9e3779b97f4a7c15ull; }
  double normal() {  // Box-Muller: always exactly two draws
    const double u = 1.0 - uniform(), v = uniform();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
  }

 private:
  uint64_t s_;
};

}  // namespace gatecheck
