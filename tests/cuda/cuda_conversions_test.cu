// The device's dtype conversions (hardware cvt for fp16, integer code for bf16)
// agree bit for bit with the host's portable code: every fp16 pattern to fp32,
// and a dense sample of fp32 patterns (every 4099th, plus all patterns near the
// fp16 overflow, subnormal and tie boundaries) to fp16 and bf16.
// NaN results must be the canonical NaN on both sides.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "kernels/gate_residual_dtype.h"
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
