// The device's dtype conversions (hardware cvt) agree bit for bit with the
// portable code: every fp16 pattern to fp32 against the host; every fp32
// pattern to fp16 and bf16 against the portable code run on the device; and a
// dense sample of fp32 patterns (every 4099th, plus all patterns near the
// fp16 overflow, subnormal and tie boundaries) against the host.
// NaN results must be the canonical NaN on both sides.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdio>
#include <string>
#include <vector>

#include "kernels/gate_residual_dtype.h"
#include "kernels/gate_residual_math.h"
#include "tests/gpu.h"

namespace gatecheck {
namespace {

__global__ void f16_to_f32_kernel(uint32_t* out) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < 65536u) out[i] = float_bits(to_float(f16_t{uint16_t(i)}));
}

__global__ void f32_to_16_kernel(const uint32_t* in, uint16_t* f16, uint16_t* bf16, size_t n) {
  const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float f = bits_float(in[i]);
  f16[i] = round_to<f16_t>(f).bits;
  bf16[i] = round_to<bf16_t>(f).bits;
}

// Over every fp32 pattern: how many roundings differ from the portable code,
// and the smallest such pattern (for the failure message). Truncate: round
// to bf16 by dropping bits instead, to show that a wrong rounding is caught.
struct Mismatches {
  unsigned long long f16, bf16;
  unsigned first_f16, first_bf16;
};

template <bool Truncate>
__global__ void f32_to_16_all_kernel(Mismatches* m) {
  const uint64_t step = uint64_t(gridDim.x) * blockDim.x;
  for (uint64_t u = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; u < (1ull << 32); u += step) {
    const float f = bits_float(uint32_t(u));
    if (round_to<f16_t>(f).bits != f16_from_float_portable(f).bits) {
      atomicAdd(&m->f16, 1ull);
      atomicMin(&m->first_f16, unsigned(u));
    }
    const uint16_t b = Truncate ? uint16_t(u >> 16) : round_to<bf16_t>(f).bits;
    if (b != bf16_from_float_portable(f).bits) {
      atomicAdd(&m->bf16, 1ull);
      atomicMin(&m->first_bf16, unsigned(u));
    }
  }
}

__global__ void round_one_kernel(uint32_t u, uint16_t* f16, uint16_t* bf16) {
  *f16 = round_to<f16_t>(bits_float(u)).bits;
  *bf16 = round_to<bf16_t>(bits_float(u)).bits;
}

template <bool Truncate>
Mismatches count_mismatches() {
  Mismatches m{0, 0, ~0u, ~0u};
  Mismatches* d = nullptr;
  if (cudaMalloc(&d, sizeof m) != cudaSuccess) {
    ADD_FAILURE() << "cudaMalloc of the mismatch counters failed: nothing was counted";
    return m;
  }
  // A failed copy or launch leaves the counts at zero: each must fail the test.
  EXPECT_EQ(cudaMemcpy(d, &m, sizeof m, cudaMemcpyHostToDevice), cudaSuccess);
  f32_to_16_all_kernel<Truncate><<<4096, 256>>>(d);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "launching the all-patterns kernel";
  EXPECT_EQ(cudaMemcpy(&m, d, sizeof m, cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(d);
  return m;
}

// "fp32 0x...: device 0x..., portable 0x..." for the first pattern that differs.
std::string first_difference(uint32_t u, bool bf16) {
  uint16_t* d = nullptr;
  uint16_t dev[2] = {0, 0};
  if (cudaMalloc(&d, 4) == cudaSuccess) {
    round_one_kernel<<<1, 1>>>(u, d, d + 1);
    cudaMemcpy(dev, d, 4, cudaMemcpyDeviceToHost);
    cudaFree(d);
  }
  const float f = bits_float(u);
  char b[96];
  std::snprintf(b, sizeof b, "first at fp32 0x%08x: device 0x%04x, portable 0x%04x", u, dev[bf16 ? 1 : 0],
                bf16 ? bf16_from_float_portable(f).bits : f16_from_float_portable(f).bits);
  return b;
}

TEST(CudaConversions, F32ToF16AndBf16AllPatternsMatchPortableCode) {
  GATECHECK_REQUIRE_GPU();
  const Mismatches m = count_mismatches<false>();
  EXPECT_EQ(m.f16, 0u) << "fp32 -> fp16 patterns differ; " << (m.f16 ? first_difference(m.first_f16, false) : "");
  EXPECT_EQ(m.bf16, 0u) << "fp32 -> bf16 patterns differ; " << (m.bf16 ? first_difference(m.first_bf16, true) : "");
}

// The same count must see a rounding that truncates: it first differs at
// 0x00008001 (just above a tie, which rounds up; 0x00008000 ties to even, down).
TEST(CudaConversions, AllPatternsCountCatchesTruncation) {
  GATECHECK_REQUIRE_GPU();
  const Mismatches m = count_mismatches<true>();
  EXPECT_EQ(m.f16, 0u);
  EXPECT_GT(m.bf16, 0u);
  EXPECT_EQ(m.first_bf16, 0x00008001u);
}

// The forward's per-element function on the device (round_inner: the product
// rounded without the NaN test) against the host's (round_to throughout): every
// 16-bit gate pattern times a set of y and res values rich in specials (NaN
// payloads, infinities, signed zeros, subnormals, overflow).
const uint16_t kSpecial16[] = {0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x3c00, 0xbc00, 0x7bff, 0xfbff,
                               0x7c00, 0xfc00, 0x7c01, 0xfc01, 0x7e00, 0xfe00, 0x7fff, 0xffff, 0x3f80, 0xbf80,
                               0x7f7f, 0xff7f, 0x7f80, 0xff80, 0x7f81, 0x7fc0, 0xffc0, 0x0080, 0x007f, 0x4b00,
                               0x5bf8, 0x1234};
constexpr int kSpecials = int(sizeof kSpecial16 / sizeof kSpecial16[0]);

// Triple i = gate pattern * kSpecials^2 + y * kSpecials + res: the same
// decoding on the device and on the host.
struct Triple {
  uint16_t gate, y, res;
};
GC_HD Triple triple(size_t i, const uint16_t* specials) {
  return Triple{uint16_t(i / (kSpecials * kSpecials)), specials[(i / kSpecials) % kSpecials], specials[i % kSpecials]};
}
template <class T>
GC_HD uint16_t out_of(const Triple& t) {
  return gate_residual_out(T{t.res}, T{t.gate}, T{t.y}).bits;
}

template <class T>
__global__ void out_all_gates_kernel(const uint16_t* specials, uint16_t* out) {
  const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < size_t(65536) * kSpecials * kSpecials) out[i] = out_of<T>(triple(i, specials));
}

template <class T>
void expect_out_matches_host(const char* dtype) {
  const size_t n = size_t(65536) * kSpecials * kSpecials;
  uint16_t *d_sp = nullptr, *d_out = nullptr;
  ASSERT_EQ(cudaMalloc(&d_sp, sizeof kSpecial16), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_out, n * 2), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d_sp, kSpecial16, sizeof kSpecial16, cudaMemcpyHostToDevice), cudaSuccess);
  out_all_gates_kernel<T><<<unsigned((n + 255) / 256), 256>>>(d_sp, d_out);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess) << "launching the " << dtype << " forward kernel";
  std::vector<uint16_t> dev(n);
  ASSERT_EQ(cudaMemcpy(dev.data(), d_out, n * 2, cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(d_sp);
  cudaFree(d_out);
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    const Triple t = triple(i, kSpecial16);
    const uint16_t host = out_of<T>(t);
    if (host != dev[i] && bad++ < 5)
      ADD_FAILURE() << dtype << " out(res=0x" << std::hex << t.res << ", gate=0x" << t.gate << ", y=0x" << t.y
                    << "): device 0x" << dev[i] << ", host 0x" << host;
  }
  EXPECT_EQ(bad, 0u) << "of " << n << " " << dtype << " triples";
}

TEST(CudaConversions, ForwardOutEveryGatePatternWithSpecialsMatchesHost) {
  GATECHECK_REQUIRE_GPU();
  expect_out_matches_host<bf16_t>("bf16");
  expect_out_matches_host<f16_t>("fp16");
}

TEST(CudaConversions, F16ToF32AllPatterns) {
  GATECHECK_REQUIRE_GPU();
  uint32_t* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 65536 * 4), cudaSuccess);
  f16_to_f32_kernel<<<256, 256>>>(d);
  std::vector<uint32_t> dev(65536);
  ASSERT_EQ(cudaMemcpy(dev.data(), d, 65536 * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(d);
  int bad = 0;
  for (uint32_t i = 0; i < 65536; ++i) {
    const uint32_t host = float_bits(to_float(f16_t{uint16_t(i)}));
    // A NaN's payload is not carried by the hardware conversion; every use of
    // it goes through arithmetic and a canonicalising rounding, so NaN-ness is
    // what must agree.
    const bool same = is_nan_bits32(host) ? is_nan_bits32(dev[i]) : host == dev[i];
    if (!same && bad++ < 5)
      ADD_FAILURE() << "f16 0x" << std::hex << i << ": device 0x" << dev[i] << " host 0x" << host;
  }
  EXPECT_EQ(bad, 0);
}

TEST(CudaConversions, F32ToF16AndBf16Sample) {
  GATECHECK_REQUIRE_GPU();
  std::vector<uint32_t> in;
  for (uint64_t u = 0; u < (1ull << 32); u += 4099) in.push_back(uint32_t(u));
  for (uint32_t sign : {0u, 0x80000000u})
    for (uint32_t c : {0x477ff000u, 0x477fefffu, 0x38800000u, 0x33000000u, 0x33000001u, 0x387fc000u,
                       0x7f800000u, 0x7f800001u, 0x7fc00000u, 0x3f808000u, 0x3f818000u})
      for (int d = -64; d <= 64; ++d) in.push_back(sign | uint32_t(int64_t(c) + d));
  const size_t n = in.size();
  uint32_t* d_in = nullptr;
  uint16_t *d_f16 = nullptr, *d_bf16 = nullptr;
  ASSERT_EQ(cudaMalloc(&d_in, n * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_f16, n * 2), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_bf16, n * 2), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d_in, in.data(), n * 4, cudaMemcpyHostToDevice), cudaSuccess);
  f32_to_16_kernel<<<unsigned((n + 255) / 256), 256>>>(d_in, d_f16, d_bf16, n);
  std::vector<uint16_t> f16(n), bf16(n);
  ASSERT_EQ(cudaMemcpy(f16.data(), d_f16, n * 2, cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(bf16.data(), d_bf16, n * 2, cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(d_in);
  cudaFree(d_f16);
  cudaFree(d_bf16);
  int bad = 0;
  for (size_t i = 0; i < n; ++i) {
    const float f = bits_float(in[i]);
    const uint16_t hf = round_to<f16_t>(f).bits, hb = round_to<bf16_t>(f).bits;
    if ((hf != f16[i] || hb != bf16[i]) && bad++ < 5)
      ADD_FAILURE() << "fp32 0x" << std::hex << in[i] << ": f16 device 0x" << f16[i] << " host 0x" << hf
                    << ", bf16 device 0x" << bf16[i] << " host 0x" << hb;
  }
  EXPECT_EQ(bad, 0) << "of " << n << " patterns";
}

}  // namespace
}  // namespace gatecheck
