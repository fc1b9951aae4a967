// The RNE conversions of gate_residual_dtype.h against c10 (LibTorch's own
// BFloat16 and Half, header-only here): every 16-bit pattern to float, and
// float to 16 bits over a strided sweep of all 2^32 patterns plus every
// rounding boundary (each midpoint between neighbouring 16-bit values and the
// fp32 values either side of it).
//
// NaN: c10::BFloat16(float) returns 0x7FC0 for every NaN (the sign is
// dropped), as gate_residual_dtype.h does. c10::Half(float) returns
// sign|0x7E00, but gate_residual_dtype.h drops the sign there too (0x7E00):
// the sign of a NaN made by fp32 arithmetic differs between x86 and the GPU,
// and the host twin must match the CUDA kernels bit for bit. Every other
// value is compared bit for bit with c10. Widening to float keeps the
// payload on both sides (bf16 shifts it, fp16 maps it into the fp32 payload).
// One documented difference: c10 widens an fp16 *signaling* NaN (0x7c01..
// 0x7dff and the negatives) through fp32 arithmetic, which sets the quiet bit
// (0x00400000); gate_residual_dtype.h moves the bits and leaves the NaN
// signaling. Both are NaN with the same sign and payload, and the first fp32
// operation or round_to quiets/canonicalises it, so no output differs.
#include <gtest/gtest.h>

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <cmath>
#include <vector>

#include "kernels/gate_residual_dtype.h"

namespace gatecheck {
namespace {

uint32_t c10_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

TEST(DTypeConversion, Bf16ToFloatAll65536) {
  for (uint32_t b = 0; b < 0x10000u; ++b) {
    const float c10 = c10::BFloat16(uint16_t(b), c10::BFloat16::from_bits());
    ASSERT_EQ(float_bits(to_float(bf16_t{uint16_t(b)})), c10_bits(c10)) << std::hex << "bf16 0x" << b;
  }
}

TEST(DTypeConversion, F16ToFloatAll65536) {
  for (uint32_t b = 0; b < 0x10000u; ++b) {
    const float c10 = c10::Half(uint16_t(b), c10::Half::from_bits());
    uint32_t ours = float_bits(to_float(f16_t{uint16_t(b)}));
    const bool signaling_nan = (b & 0x7c00u) == 0x7c00u && (b & 0x3ffu) != 0 && (b & 0x200u) == 0;
    if (signaling_nan) {
      ASSERT_EQ(ours & 0x00400000u, 0u) << std::hex << "f16 0x" << b << " stays signaling";
      ours |= 0x00400000u;  // c10 quiets it (see the comment at the top)
    }
    ASSERT_EQ(ours, c10_bits(c10)) << std::hex << "f16 0x" << b;
  }
}

// Every fp32 pattern to check: a strided sweep of all 2^32, the specials,
// and for each pair of neighbouring 16-bit values the fp32 midpoint and the
// fp32 values just below and above it (both signs).
std::vector<uint32_t> floats_to_check(bool bf16) {
  std::vector<uint32_t> v;
  for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 1021) v.push_back(uint32_t(u));
  for (uint32_t s : {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7f800001u, 0x7fc00000u, 0xffc00000u,
                     0x7fffffffu, 0xffffffffu, 0xff800001u, 0x00000001u, 0x807fffffu})
    v.push_back(s);
  for (uint32_t h = 0; h < 0x7fffu; ++h) {
    const float lo = bf16 ? to_float(bf16_t{uint16_t(h)}) : to_float(f16_t{uint16_t(h)});
    const float hi = bf16 ? to_float(bf16_t{uint16_t(h + 1)}) : to_float(f16_t{uint16_t(h + 1)});
    if (std::isnan(lo) || std::isnan(hi)) continue;
    const float mid = std::isinf(hi) ? lo + (lo - bits_to_float(bf16 ? DType::bf16 : DType::f16, h - 1)) / 2
                                     : lo + (hi - lo) / 2;  // exact: one more bit than the 16-bit format
    const uint32_t m = float_bits(mid);
    for (uint32_t x : {m - 1, m, m + 1}) {
      v.push_back(x);
      v.push_back(x | 0x80000000u);
    }
  }
  return v;
}

TEST(DTypeConversion, FloatToBf16SweepAndEveryBoundary) {
  const std::vector<uint32_t> inputs = floats_to_check(true);
  int64_t nans = 0;
  for (uint32_t u : inputs) {
    const float f = bits_float(u);
    const uint16_t c10 = c10::BFloat16(f).x;
    ASSERT_EQ(bf16_from_float(f).bits, c10) << std::hex << "float 0x" << u;
    nans += std::isnan(f);
  }
  EXPECT_GT(inputs.size(), 4000000u);
  EXPECT_GT(nans, 1000);
}

TEST(DTypeConversion, FloatToF16SweepAndEveryBoundary) {
  const std::vector<uint32_t> inputs = floats_to_check(false);
  for (uint32_t u : inputs) {
    const float f = bits_float(u);
    const uint16_t expect = std::isnan(f) ? uint16_t(0x7e00u) : c10::Half(f).x;  // unsigned canonical NaN
    ASSERT_EQ(f16_from_float(f).bits, expect) << std::hex << "float 0x" << u;
  }
  // the boundaries that matter most, spelled out
  EXPECT_EQ(f16_from_float(65519.996f).bits, 0x7bffu);  // just below 65520: max
  EXPECT_EQ(f16_from_float(65520.0f).bits, 0x7c00u);     // the tie rounds to Inf
  EXPECT_EQ(f16_from_float(0x1p-25f).bits, 0x0000u);     // half the smallest subnormal: tie to 0
  EXPECT_EQ(f16_from_float(std::nextafter(0x1p-25f, 1.0f)).bits, 0x0001u);
}

}  // namespace
}  // namespace gatecheck
