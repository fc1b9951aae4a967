#include "cuda_case.h"

#include <algorithm>
#include <sstream>

namespace gatecheck {
namespace testing_cuda {

const char* pattern_name(Pattern p) {
  switch (p) {
    case Pattern::sorted: return "sorted";
    case Pattern::random: return "random";
    case Pattern::one_gate: return "one_gate";
    case Pattern::identity: return "identity";
    case Pattern::unused_gates: return "unused_gates";
  }
  return "?";
}

std::string RawCase::describe() const {
  std::ostringstream s;
  s << dtype_name(dtype) << " rows=" << rows << " dim=" << dim << " gates=" << gates
    << " index=" << pattern_name(pattern);
  return s.str();
}

namespace {
uint32_t random_value(std::mt19937_64& rng, DType t) {
  const uint64_t pick = rng() % 10;
  if (pick == 0) {  // raw bits: specials, subnormals, huge values
    const uint32_t bits = uint32_t(rng());
    return t == DType::f32 ? bits : (bits & 0xffffu);
  }
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  return float_to_bits_rn(t, u(rng));
}

std::vector<uint32_t> values(std::mt19937_64& rng, DType t, int64_t n) {
  std::vector<uint32_t> v(static_cast<size_t>(n));
  for (auto& x : v) x = random_value(rng, t);
  return v;
}
}  // namespace

RawCase make_case(std::mt19937_64& rng, DType t, int64_t rows, int64_t dim, int64_t gates, Pattern p) {
  RawCase c;
  c.dtype = t;
  c.rows = rows;
  c.dim = dim;
  c.pattern = p;
  if (p == Pattern::identity) gates = rows;
  c.gates = std::max<int64_t>(gates, 1);
  c.index.resize(size_t(rows));
  std::uniform_int_distribution<int64_t> g(0, c.gates - 1);
  const int64_t only = g(rng);
  for (int64_t r = 0; r < rows; ++r) {
    switch (p) {
      case Pattern::sorted:
      case Pattern::random: c.index[size_t(r)] = g(rng); break;
      case Pattern::one_gate: c.index[size_t(r)] = only; break;
      case Pattern::identity: c.index[size_t(r)] = r; break;
      case Pattern::unused_gates: c.index[size_t(r)] = (g(rng) / 2) * 2; break;  // odd gates unused
    }
  }
  if (p == Pattern::sorted) std::sort(c.index.begin(), c.index.end());
  c.res = values(rng, t, rows * dim);
  c.gate = values(rng, t, c.gates * dim);
  c.y = values(rng, t, rows * dim);
  c.grad_out = values(rng, t, rows * dim);
  return c;
}

}  // namespace testing_cuda
}  // namespace gatecheck
