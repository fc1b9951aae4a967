// Every comparator fails when it must: +0 vs -0, NaN vs number, NaN
// payloads, one ulp off, Inf signs, shape; and reports a person can act on.
#include <gtest/gtest.h>

#include <cmath>

#include "oracle_test_support.h"

namespace gatecheck::testing {
namespace {

HostTensor tensor(DType t, std::initializer_list<uint32_t> bits) {
  HostTensor h(t, 1, int64_t(bits.size()));
  int64_t i = 0;
  for (uint32_t b : bits) h.set_bits(i++, b);
  return h;
}

Expected finite(double v, double bound) {
  Expected e;
  e.value = v;
  e.bound = bound;
  return e;
}

TEST(CompareBitwise, EqualPasses) {
  const HostTensor a = tensor(DType::bf16, {0x3f80, 0x8000, 0x7fc0, 0x7f80});
  EXPECT_TRUE(compare_bitwise("out", a, a).ok());
}

TEST(CompareBitwise, PlusZeroVsMinusZeroFails) {
  const Comparison c = compare_bitwise("out", tensor(DType::f32, {0x00000000}), tensor(DType::f32, {0x80000000}));
  ASSERT_EQ(c.failed, 1);
  EXPECT_EQ(c.first[0].why, "+0 vs -0");
}

TEST(CompareBitwise, NaNVsNumberFailsEvenWithNanAny) {
  for (bool nan_any : {false, true}) {
    const Comparison c = compare_bitwise("out", tensor(DType::f16, {0x7e00}), tensor(DType::f16, {0x3c00}), nan_any);
    ASSERT_EQ(c.failed, 1);
    EXPECT_EQ(c.nan_failed, 1);
    EXPECT_EQ(c.first[0].why, "NaN vs number");
  }
}

TEST(CompareBitwise, NaNPayloadDiffersFailsUnlessNanAny) {
  const HostTensor a = tensor(DType::bf16, {0x7fc1}), b = tensor(DType::bf16, {0x7fc0});
  const Comparison c = compare_bitwise("out", a, b);
  ASSERT_EQ(c.failed, 1);
  EXPECT_EQ(c.nan_failed, 1);
  EXPECT_EQ(c.first[0].why, "NaN payloads differ");
  EXPECT_TRUE(compare_bitwise("out", a, b, /*nan_any=*/true).ok());
  // a NaN's sign is part of its bits too
  EXPECT_FALSE(compare_bitwise("out", tensor(DType::bf16, {0xffc0}), b).ok());
}

TEST(CompareBitwise, OneUlpOffFails) {
  for (DType t : kAllDTypes) {
    const uint32_t one = t == DType::f32 ? 0x3f800000u : t == DType::f16 ? 0x3c00u : 0x3f80u;
    const Comparison c = compare_bitwise("grad_y", tensor(t, {one}), tensor(t, {one + 1}));
    ASSERT_EQ(c.failed, 1) << dtype_name(t);
    EXPECT_EQ(c.first[0].why, "1 ulp apart");
  }
  // across zero: smallest positive vs smallest negative subnormal
  const Comparison z = compare_bitwise("out", tensor(DType::f16, {0x0001}), tensor(DType::f16, {0x8001}));
  EXPECT_EQ(z.first[0].why, "2 ulp apart");
}

TEST(CompareBitwise, InfVsMaxAndShapeFail) {
  const Comparison c = compare_bitwise("out", tensor(DType::bf16, {0x7f80}), tensor(DType::bf16, {0x7f7f}));
  EXPECT_EQ(c.inf_failed, 1);
  EXPECT_FALSE(compare_bitwise("out", HostTensor(DType::f32, 2, 3), HostTensor(DType::f32, 3, 2)).ok());
  EXPECT_FALSE(compare_bitwise("out", HostTensor(DType::f16, 2, 3), HostTensor(DType::bf16, 2, 3)).ok());
}

TEST(CompareAccuracy, WithinBoundPassesOneUlpBeyondFails) {
  // bf16 1.0078125 is 2^-7 from 1: within 2^-7, not within 2^-8
  const HostTensor got = tensor(DType::bf16, {0x3f81});
  EXPECT_TRUE(compare_accuracy("out", got, {finite(1.0, 0x1p-7)}).ok());
  const Comparison c = compare_accuracy("out", got, {finite(1.0, 0x1p-8)});
  ASSERT_EQ(c.failed, 1);
  EXPECT_DOUBLE_EQ(c.max_err_over_bound, 2.0);
}

TEST(CompareAccuracy, ExactZeroMustCarryItsSign) {
  const Expected minus_zero = finite(-0.0, 0), plus_zero = finite(0.0, 0);
  EXPECT_TRUE(compare_accuracy("out", tensor(DType::f32, {0x80000000}), {minus_zero}).ok());
  const Comparison c = compare_accuracy("out", tensor(DType::f32, {0x00000000}), {minus_zero});
  ASSERT_EQ(c.failed, 1);
  EXPECT_NE(c.first[0].why.find("+0 vs -0"), std::string::npos) << c.first[0].why;
  EXPECT_FALSE(compare_accuracy("out", tensor(DType::f32, {0x80000000}), {plus_zero}).ok());
  // With a non-zero bound either zero is a number within it.
  EXPECT_TRUE(compare_accuracy("out", tensor(DType::f32, {0x80000000}), {finite(0.0, 0x1p-150)}).ok());
}

TEST(CompareAccuracy, NaNAgainstNumberFailsBothWays) {
  const Comparison a = compare_accuracy("out", tensor(DType::f32, {0x7fc00000}), {finite(1.0, 1.0)});
  EXPECT_EQ(a.failed, 1);
  EXPECT_EQ(a.nan_failed, 1);
  Expected nan;
  nan.value = NAN;
  nan.kind = Expected::nan;
  const Comparison b = compare_accuracy("out", tensor(DType::f32, {0x3f800000}), {nan});
  EXPECT_EQ(b.nan_failed, 1);
  // any NaN payload is accepted where NaN is expected
  EXPECT_TRUE(compare_accuracy("out", tensor(DType::f32, {0xffc00001}), {nan}).ok());
}

TEST(CompareAccuracy, InfinityKinds) {
  Expected pos;
  pos.value = INFINITY;
  pos.kind = Expected::pos_inf;
  EXPECT_TRUE(compare_accuracy("out", tensor(DType::f16, {0x7c00}), {pos}).ok());
  EXPECT_EQ(compare_accuracy("out", tensor(DType::f16, {0xfc00}), {pos}).inf_failed, 1);
  EXPECT_EQ(compare_accuracy("out", tensor(DType::f16, {0x7bff}), {pos}).inf_failed, 1);  // max is not Inf
  Expected maybe = finite(-65530, 16);
  maybe.kind = Expected::finite_or_inf;
  EXPECT_TRUE(compare_accuracy("out", tensor(DType::f16, {0xfc00}), {maybe}).ok());
  EXPECT_FALSE(compare_accuracy("out", tensor(DType::f16, {0x7c00}), {maybe}).ok());  // wrong sign
  EXPECT_FALSE(compare_accuracy("out", tensor(DType::f16, {0x7e00}), {maybe}).ok());  // NaN
  EXPECT_FALSE(compare_accuracy("out", tensor(DType::f16, {0xfbfe}), {maybe}).ok());  // -65472: out of bound
  EXPECT_FALSE(compare_accuracy("out", tensor(DType::f16, {0x7c00}), {finite(65504, 16)}).ok());
  Expected any = finite(0, 1);
  any.kind = Expected::finite_or_overflow;
  for (uint32_t b : {0x7c00u, 0xfc00u, 0x7e00u, 0x0000u})
    EXPECT_TRUE(compare_accuracy("grad_gate", tensor(DType::f16, {b}), {any}).ok()) << b;
  EXPECT_FALSE(compare_accuracy("grad_gate", tensor(DType::f16, {0x4000}), {any}).ok());  // 2 > bound 1
}

TEST(CompareAccuracy, BitwiseExpectationChecksEveryBit) {
  Expected copy;
  copy.value = NAN;
  copy.kind = Expected::nan;
  copy.bitwise = true;
  copy.bits = 0x7fc1;
  EXPECT_TRUE(compare_accuracy("grad_res", tensor(DType::bf16, {0x7fc1}), {copy}).ok());
  EXPECT_FALSE(compare_accuracy("grad_res", tensor(DType::bf16, {0x7fc0}), {copy}).ok());
  copy = finite(-0.0, 0);
  copy.bitwise = true;
  copy.bits = 0x8000;
  EXPECT_FALSE(compare_accuracy("grad_res", tensor(DType::bf16, {0x0000}), {copy}).ok());
}

// A second allowed outcome (rmsnorm_modulate's rstd = +0 rows): exactly
// `bits` (either zero where it is a zero), NaN only with or_nan; nothing else
// beyond the bound, and not Inf.
TEST(CompareAccuracy, SecondOutcomeIsExactlyItsBitsOrNaN) {
  Expected e = finite(100, 1);
  e.or_bits = true;
  e.bits = 0xbe00;  // bf16 -0.125: shift
  EXPECT_TRUE(compare_accuracy("out", tensor(DType::bf16, {0x42c8}), {e}).ok());   // 100: within the bound
  EXPECT_TRUE(compare_accuracy("out", tensor(DType::bf16, {0xbe00}), {e}).ok());   // the other outcome
  const Comparison near = compare_accuracy("out", tensor(DType::bf16, {0xbe01}), {e});  // one ulp from it
  ASSERT_EQ(near.failed, 1);
  EXPECT_NE(near.first[0].why.find("nor the other allowed value -0.125"), std::string::npos) << near.first[0].why;
  EXPECT_FALSE(compare_accuracy("out", tensor(DType::bf16, {0x0000}), {e}).ok());  // 0 is not shift
  EXPECT_FALSE(compare_accuracy("out", tensor(DType::bf16, {0x7fc0}), {e}).ok());  // NaN needs or_nan
  EXPECT_FALSE(compare_accuracy("out", tensor(DType::bf16, {0xff80}), {e}).ok());  // -Inf is neither
  e.or_nan = true;
  EXPECT_TRUE(compare_accuracy("out", tensor(DType::bf16, {0x7fc0}), {e}).ok());
  Expected z = finite(0.5, 0.25);  // dx: +-0
  z.or_bits = true;
  for (uint32_t b : {0x00000000u, 0x80000000u})
    EXPECT_TRUE(compare_accuracy("dx", tensor(DType::f32, {b}), {z}).ok()) << b;
  EXPECT_FALSE(compare_accuracy("dx", tensor(DType::f32, {0x00000001}), {z}).ok());  // the smallest subnormal
}

TEST(CompareAccuracy, SizeMismatchFails) {
  EXPECT_FALSE(compare_accuracy("out", HostTensor(DType::f32, 2, 2), std::vector<Expected>(3)).ok());
}

TEST(Comparison, CountsFirstLastAndKeepsEightMismatches) {
  HostTensor got(DType::f32, 4, 5);
  std::vector<Expected> want(20, finite(0.0, 0.5));
  for (int64_t i : {3, 4, 6, 8, 9, 11, 12, 13, 14, 17}) got.set_value_rn(i, 1.0f);
  got.set_bits(19, 0x7fc00000);
  const Comparison c = compare_accuracy("grad_y", got, want);
  EXPECT_EQ(c.checked, 20);
  EXPECT_EQ(c.failed, 11);
  EXPECT_EQ(c.nan_failed, 1);
  EXPECT_EQ(c.first_bad, 3);
  EXPECT_EQ(c.last_bad, 19);
  ASSERT_EQ(c.first.size(), kMaxMismatches);
  EXPECT_EQ(c.first[1].row, 0);
  EXPECT_EQ(c.first[1].col, 4);
  EXPECT_EQ(c.first[2].row, 1);
  EXPECT_EQ(c.first[2].col, 1);
  EXPECT_DOUBLE_EQ(c.max_err_over_bound, 2.0);
}

TEST(Comparison, SummaryNamesTensorPositionsBitsOracleAndBound) {
  HostTensor got(DType::bf16, 5, 9);
  std::vector<Expected> want(45, finite(1.0, 0x1p-8));
  for (int64_t i = 0; i < 45; ++i) got.set_bits(i, 0x3f80);
  for (int64_t i : {2 * 9 + 7, 3 * 9 + 0, 4 * 9 + 1}) got.set_bits(i, 0x3f81);
  const std::string s = compare_accuracy("grad_gate", got, want).summary();
  const std::string first_line = s.substr(0, s.find('\n'));
  EXPECT_EQ(first_line,
            "[grad_gate] 3 of 45 elements wrong (first [2,7], last [4,1]); [2,7]: got 0x3f81 "
            "(1.0078125), oracle 1 \u00b1 0.0039 (|err| 0.0078 > bound)");
  EXPECT_NE(s.find("[3,0]: got 0x3f81"), std::string::npos) << s;
  EXPECT_NE(s.find("[4,1]: got 0x3f81"), std::string::npos) << s;
  const std::string b = compare_bitwise("out", got, HostTensor(DType::bf16, 5, 9)).summary();
  EXPECT_NE(b.find("[out] 45 of 45 elements wrong (first [0,0], last [4,8]); [0,0]: got 0x3f80 (1), want "
                   "0x0000 (+0)"),
            std::string::npos)
      << b;
  EXPECT_EQ(compare_accuracy("grad_gate", HostTensor(DType::bf16, 5, 9), std::vector<Expected>(45)).summary(),
            "[grad_gate] all 45 elements ok (max |err|/bound 0)");
}

// A NaN where the oracle wants a number has no |err|: the ratio then names the finite elements
// it covers, so that "max |err|/bound 0" does not read as if the NaN were exact.
TEST(Comparison, SummaryOfNaNFailuresSaysTheRatioIsTheFiniteElements) {
  HostTensor got(DType::bf16, 1, 4);
  for (int64_t i = 0; i < 4; ++i) got.set_bits(i, 0x3f80);
  got.set_bits(2, 0x7fc0);
  const std::string s = compare_accuracy("dshift", got, std::vector<Expected>(4, finite(1.0, 0x1p-8))).summary();
  EXPECT_NE(s.find("1 NaN and 0 Inf mismatches; the finite elements: max |err|/bound 0"), std::string::npos) << s;
  got.set_bits(1, 0x3f81);  // one finite failure too: the ratio is the run's worst, as before
  const std::string t = compare_accuracy("dshift", got, std::vector<Expected>(4, finite(1.0, 0x1p-8))).summary();
  EXPECT_NE(t.find("1 NaN and 0 Inf mismatches, max |err|/bound 2"), std::string::npos) << t;
}

}  // namespace
}  // namespace gatecheck::testing
