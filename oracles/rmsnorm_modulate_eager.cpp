// Bitwise model of torch eager's `out` for rmsnorm_modulate: diffusers'
// composition as the torch-eager implementation runs it
// (kernels/torch/rmsnorm_modulate_torch_eager.cpp), on LibTorch's CPU:
//   sq    = fl32(x * x)                          x.float().pow(2), elementwise
//   ss    = the fp32 sum of a row's sq in LibTorch's CPU order (below)
//   ms    = fl32(ss / dim)                       mean is sum, then div_ on the CPU
//   v     = fl32(ms + fl32(eps));  rstd = fl32(1 / fl32(sqrt(v)))   (rsqrt as 1/sqrt)
//   n     = RN_T(fl32(fl32(x * rstd) * w))       F.rms_norm's order, one rounding to T
//   out   = RN_T(fl32(RN_T(fl32(n * RN_T(1 + scale))) + shift))
//
// The reduction order is LibTorch's cascade sum for a reduction over a
// contiguous last dimension (aten/src/ATen/native/cpu/SumKernel.cpp, 1.13),
// with the 8-lane fp32 vectors of its AVX2 kernels:
//  - dim >= 8: the row is cut into dim/8 vectors; those are summed lane-wise
//    by row_sum (4 interleaved accumulators fed by a 4-level cascade of
//    2^max(4, ceil(log2(n))/4) vectors a level, n = dim/8/4; the leftover
//    vectors into accumulator 0; then accumulators 1..3 into 0); then the
//    scalar tail (columns past the last whole vector) is summed left to
//    right from 0, and the 8 lanes are added to it in lane order;
//  - dim < 8: the same row_sum on scalars (4 interleaved accumulators).
// It holds while LibTorch reduces a row on one thread: always, except a
// single row of 32,768 elements or more with several intra-op threads
// (its two-pass parallel reduction cuts the row among them); other CPU
// capabilities (16-lane AVX-512 kernels) and CUDA (rsqrtf, its own tree)
// order or round differently. Only `out` is pinned: dx and dweight are
// autograd's through several fp32 ops, and dshift and dscale are index_add's.
//
// The arithmetic is the oracle's own: fp32 operations taken in float64 and
// rounded once (innocuous double rounding, as gate_residual_eager.cpp says;
// sqrt too: 53 >= 2*24 + 2), only the dtype conversions are shared.
#include <algorithm>
#include <cmath>
#include <vector>

#include "../kernels/rmsnorm_modulate.h"
#include "op_oracles.h"
#include "oracle_threads.h"

namespace gatecheck {

namespace {

constexpr int64_t kLanes = 8;   // AVX2's Vectorized<float>
constexpr int64_t kIlp = 4;     // row_sum's interleaved accumulators
constexpr int kLevels = 4;      // multi_row_sum's cascade

float add(float a, float b) { return float(double(a) + double(b)); }
float mul(float a, float b) { return float(double(a) * double(b)); }
float rn(DType t, float x) { return bits_to_float(t, float_to_bits_rn(t, x)); }

int ceil_log2(int64_t n) {
  int k = 0;
  while ((int64_t(1) << k) < n) ++k;
  return k;
}

// A vector of `width` fp32 lanes, each lane summed on its own.
using Lanes = std::vector<float>;

void add_into(Lanes& a, const float* b) {
  for (size_t k = 0; k < a.size(); ++k) a[k] = add(a[k], b[k]);
}
void add_into(Lanes& a, const Lanes& b) { add_into(a, b.data()); }

// row_sum over `items` (vectors of `width` lanes, one after another in v):
// multi_row_sum with 4 interleaved accumulators over the first items/4*4,
// the rest into accumulator 0, then accumulators 1..3 into 0.
Lanes row_sum(const std::vector<float>& v, int64_t items, int64_t width) {
  auto item = [&](int64_t i) { return v.data() + i * width; };
  const int64_t groups = items / kIlp;
  const int power = std::max(4, ceil_log2(groups) / kLevels);
  const int64_t step = int64_t(1) << power, mask = step - 1;
  std::vector<std::vector<Lanes>> acc(kLevels, std::vector<Lanes>(kIlp, Lanes(size_t(width), 0.0f)));
  int64_t i = 0;
  for (; i + step <= groups;) {
    for (int64_t s = 0; s < step; ++s, ++i)
      for (int64_t k = 0; k < kIlp; ++k) add_into(acc[0][size_t(k)], item(i * kIlp + k));
    for (int j = 1; j < kLevels; ++j) {
      for (int64_t k = 0; k < kIlp; ++k) {
        add_into(acc[size_t(j)][size_t(k)], acc[size_t(j - 1)][size_t(k)]);
        acc[size_t(j - 1)][size_t(k)].assign(size_t(width), 0.0f);
      }
      if ((i & (mask << (j * power))) != 0) break;
    }
  }
  for (; i < groups; ++i)
    for (int64_t k = 0; k < kIlp; ++k) add_into(acc[0][size_t(k)], item(i * kIlp + k));
  for (int j = 1; j < kLevels; ++j)
    for (int64_t k = 0; k < kIlp; ++k) add_into(acc[0][size_t(k)], acc[size_t(j)][size_t(k)]);
  Lanes sum = acc[0][0];
  for (int64_t r = groups * kIlp; r < items; ++r) add_into(sum, item(r));
  for (int64_t k = 1; k < kIlp; ++k) add_into(sum, acc[0][size_t(k)]);
  return sum;
}

// A row's sum of squares (sq: the fp32 squares) in LibTorch's CPU order.
float eager_row_sum(const std::vector<float>& sq) {
  const int64_t dim = int64_t(sq.size());
  if (dim < kLanes) return row_sum(sq, dim, 1)[0];
  const int64_t vectors = dim / kLanes;
  const Lanes lanes = row_sum(sq, vectors, kLanes);
  float total = 0.0f;
  for (int64_t j = vectors * kLanes; j < dim; ++j) total = add(total, sq[size_t(j)]);
  for (float l : lanes) total = add(total, l);
  return total;
}

}  // namespace

Outputs rmsnorm_modulate_eager_model(const Case& c) {
  const DType t = c.dtype;
  const HostTensor &x = c.input("x"), &w = c.input("w"), &shift = c.input("shift"), &scale = c.input("scale");
  const float eps = float(c.scalar("eps"));
  Outputs o = outputs_for(c);
  HostTensor& out = o["out"];
  // Each row is its own (its sum of squares is within the row): rows on
  // threads give the same bits.
  const int threads = int(std::min<int64_t>(std::max<int64_t>(c.rows, 1), oracle_threads::for_elements(c.rows * c.dim)));
  oracle_threads::run(threads, [&](int part) {
    const auto [r0, r1] = oracle_threads::piece(0, c.rows, part, threads);
    std::vector<float> sq(size_t(c.dim));
    for (int64_t r = r0; r < r1; ++r) {
      for (int64_t j = 0; j < c.dim; ++j) sq[size_t(j)] = mul(x.value(r * c.dim + j), x.value(r * c.dim + j));
      const float ms = float(double(eager_row_sum(sq)) / double(c.dim));
      const float rstd = float(1.0 / double(float(std::sqrt(double(add(ms, eps))))));
      const int64_t base = c.index[size_t(r)] * c.dim;
      for (int64_t j = 0; j < c.dim; ++j) {
        const int64_t i = r * c.dim + j, k = base + j;
        const float n = rn(t, mul(mul(x.value(i), rstd), w.value(j)));
        const float f = rn(t, add(1.0f, scale.value(k)));
        out.set_bits(i, float_to_bits_rn(t, add(rn(t, mul(n, f)), shift.value(k))));
      }
    }
  });
  return o;
}

}  // namespace gatecheck
