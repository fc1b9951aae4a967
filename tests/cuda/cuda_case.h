// Random gate_residual problems for the cuda-vs-host tests, as raw element bits.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/gate_residual_dtype.h"

namespace gatecheck {
namespace testing_cuda {

// Index patterns. Each names a regime the backward's plan must get right.
enum class Pattern { sorted, random, one_gate, identity, unused_gates };
const char* pattern_name(Pattern p);

struct RawCase {
  DType dtype = DType::bf16;
  int64_t rows = 0, dim = 0, gates = 0;
  Pattern pattern = Pattern::random;
  std::vector<int64_t> index;
  // Element bits, 16-bit dtypes in the low half.
  std::vector<uint32_t> res, gate, y, grad_out;
  std::string describe() const;
};

// Values: mostly finite numbers in [-4, 4], some raw bit patterns (NaN, Inf,
// subnormals, -0), so that rounding and NaN canonicalisation are compared too.
RawCase make_case(std::mt19937_64& rng, DType t, int64_t rows, int64_t dim, int64_t gates, Pattern p);

}  // namespace testing_cuda
}  // namespace gatecheck
