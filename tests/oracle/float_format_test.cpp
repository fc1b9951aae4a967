// ulp, overflow threshold, representability and gamma_n, the pieces every
// bound is made of.
#include <gtest/gtest.h>

#include <cmath>

#include "oracle_test_support.h"

namespace gatecheck::testing {
namespace {

TEST(OracleFloatFormat, UlpAtOneZeroAndSubnormals) {
  EXPECT_EQ(ulp(DType::f32, 1.0), 0x1p-23);
  EXPECT_EQ(ulp(DType::f16, 1.0), 0x1p-10);
  EXPECT_EQ(ulp(DType::bf16, 1.0), 0x1p-7);
  EXPECT_EQ(ulp(DType::f32, 1.9999), 0x1p-23);  // still the [1,2) binade
  EXPECT_EQ(ulp(DType::f32, -2.0), 0x1p-22);
  EXPECT_EQ(ulp(DType::f32, 0.0), 0x1p-149);    // subnormal spacing
  EXPECT_EQ(ulp(DType::f16, 0.0), 0x1p-24);
  EXPECT_EQ(ulp(DType::bf16, 0.0), 0x1p-133);
  EXPECT_EQ(ulp(DType::f16, 0x1p-20), 0x1p-24);  // a subnormal
  EXPECT_EQ(ulp(DType::f16, 65504.0), 32.0);
  EXPECT_TRUE(std::isinf(ulp(DType::f32, INFINITY)));
  EXPECT_TRUE(std::isnan(ulp(DType::f32, NAN)));
}

// ulp(x) is exactly the gap to the next value up, for every finite 16-bit
// value (sign, binade, subnormal and zero included) and a sample of fp32.
TEST(OracleFloatFormat, UlpIsTheGapToTheNextValue) {
  for (DType t : {DType::f16, DType::bf16}) {
    int64_t checked = 0;
    for (uint32_t b = 0; b < 0x10000u; ++b) {
      const double x = bits_to_float(t, b);
      if (!std::isfinite(x) || x < 0) continue;
      const double up = bits_to_float(t, next_up(t, b));
      if (std::isinf(up)) continue;
      ASSERT_EQ(up - x, ulp(t, x)) << dtype_name(t) << " bits 0x" << std::hex << b;
      ++checked;
    }
    EXPECT_GT(checked, 30000);
  }
  for (uint32_t b = 0; b < 0x7f7fffffu; b += 104729) {
    const double x = bits_float(b), up = bits_float(b + 1);
    ASSERT_EQ(up - x, ulp(DType::f32, x)) << std::hex << b;
  }
}

TEST(OracleFloatFormat, OverflowThresholdIsWhereRoundingGivesInf) {
  // fp32: the hardware conversion from double is the reference
  const double thr32 = overflow_threshold(DType::f32);
  EXPECT_TRUE(std::isinf(float(thr32)));
  EXPECT_TRUE(std::isfinite(float(std::nextafter(thr32, 0.0))));
  // 16-bit: the threshold is an fp32 value; it and the fp32 value below it
  for (DType t : {DType::f16, DType::bf16}) {
    const float thr = float(overflow_threshold(t));
    EXPECT_EQ(double(thr), overflow_threshold(t));
    EXPECT_TRUE(std::isinf(bits_to_float(t, float_to_bits_rn(t, thr)))) << dtype_name(t);
    EXPECT_TRUE(std::isfinite(bits_to_float(t, float_to_bits_rn(t, std::nextafter(thr, 0.0f)))))
        << dtype_name(t);
  }
  EXPECT_EQ(overflow_threshold(DType::f16), 65520.0);
  EXPECT_EQ(overflow_threshold(DType::bf16), 0x1p128 - 0x1p119);
  EXPECT_EQ(overflow_threshold(DType::f32), 0x1p128 - 0x1p103);
}

TEST(OracleFloatFormat, Representable) {
  EXPECT_TRUE(representable(DType::bf16, 1.0078125));
  EXPECT_FALSE(representable(DType::bf16, 1.00390625));
  EXPECT_TRUE(representable(DType::f16, 1.0009765625));
  EXPECT_FALSE(representable(DType::f16, 0x1p-25));   // below fp16's subnormals
  EXPECT_TRUE(representable(DType::f16, 0x1p-24));
  EXPECT_TRUE(representable(DType::f32, 0x1p-149));
  EXPECT_FALSE(representable(DType::f32, 1 + 0x1p-24));
  EXPECT_FALSE(representable(DType::f16, 65536.0));
  EXPECT_FALSE(representable(DType::f32, INFINITY));
  EXPECT_FALSE(representable(DType::f32, NAN));
}

TEST(OracleFloatFormat, GammaN) {
  EXPECT_EQ(gamma_n(0), 0.0);
  EXPECT_DOUBLE_EQ(gamma_n(1), 0x1p-24 / (1 - 0x1p-24));
  EXPECT_GT(gamma_n(4096), 4096 * 0x1p-24);
  EXPECT_TRUE(std::isinf(gamma_n(int64_t(1) << 24)));
}

}  // namespace
}  // namespace gatecheck::testing
