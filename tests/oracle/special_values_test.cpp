// The special-value semantics of SEMANTICS.md: NaN, +-Inf, overflow,
// subnormals and signed zero, for the oracle and through the host twin.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/gate_residual_test_names.h"
#include "oracle_test_support.h"

namespace gatecheck::testing {
namespace {

// A one-row, one-gate case from values (rounded to the dtype).
Case one(DType t, float res, float gate, float y, float g, int64_t rows = 1) {
  Case c = make_case(t, rows, 1, 1);
  c.input("gate").set_value_rn(0, gate);
  for (int64_t r = 0; r < rows; ++r) {
    c.input("res").set_value_rn(r, res);
    c.input("y").set_value_rn(r, y);
    c.input("grad_out").set_value_rn(r, g);
  }
  return c;
}

void expect_host_passes(const Case& c) {
  const Reference ref = oracle_reference(c);
  const Outputs o = run_host(c);
  for (const char* name : kOutputNames) {
    const Comparison cmp = compare_accuracy(name, o[name], ref[name]);
    EXPECT_TRUE(cmp.ok()) << describe(c) << "\n" << cmp.summary();
  }
}

TEST(OracleSpecialValues, NaNWhereIEEEGivesNaN) {
  for (DType t : kAllDTypes) {
    const Reference a = oracle_reference(one(t, NAN, 1, 1, 1));
    EXPECT_EQ(a["out"][0].kind, Expected::nan);
    EXPECT_EQ(a["grad_y"][0].kind, Expected::finite);  // grad_y does not read res
    const Reference b = oracle_reference(one(t, 1, INFINITY, 0, 1));  // Inf * 0
    EXPECT_EQ(b["out"][0].kind, Expected::nan);
    EXPECT_EQ(b["grad_y"][0].kind, Expected::pos_inf);
    const Reference d = oracle_reference(one(t, -INFINITY, 1, INFINITY, 1));  // -Inf + Inf
    EXPECT_EQ(d["out"][0].kind, Expected::nan);
    EXPECT_EQ(d["grad_gate"][0].kind, Expected::pos_inf);
    // +Inf and -Inf terms in one grad_gate sum
    Case e = one(t, 0, 1, INFINITY, 1, 2);
    e.input("grad_out").set_value_rn(1, -1);
    EXPECT_EQ(oracle_reference(e)["grad_gate"][0].kind, Expected::nan);
    for (const Case& c : {one(t, NAN, 1, 1, 1), one(t, 1, INFINITY, 0, 1), one(t, -INFINITY, 1, INFINITY, 1), e})
      expect_host_passes(c);
  }
}

TEST(OracleSpecialValues, InfinityFromAnInfiniteInputIsExact) {
  const Reference r = oracle_reference(one(DType::f16, -INFINITY, 2, 3, -INFINITY));
  EXPECT_EQ(r["out"][0].kind, Expected::neg_inf);
  EXPECT_EQ(r["grad_y"][0].kind, Expected::neg_inf);
  EXPECT_EQ(r["grad_gate"][0].kind, Expected::neg_inf);
  EXPECT_EQ(r["grad_res"][0].kind, Expected::neg_inf);
  expect_host_passes(one(DType::f16, -INFINITY, 2, 3, -INFINITY));
}

// bf16: gate*y = 2^128 overflows, res = -max brings the exact out back to
// 2^120. Two roundings give +Inf, a fused evaluation 2^120: both correct.
TEST(OracleSpecialValues, ProductOverflowAcceptsInfOfTheRightSign) {
  const Case c = one(DType::bf16, -0x1.fep127f, 0x1p64f, 0x1p64f, 1);
  const Expected e = oracle_reference(c)["out"][0];
  EXPECT_EQ(e.kind, Expected::finite_or_inf);
  EXPECT_EQ(e.value, 0x1p120);
  expect_host_passes(c);
  EXPECT_TRUE(std::isinf(run_host(c)["out"].value(0)));
  HostTensor fused(DType::bf16, 1, 1), wrong(DType::bf16, 1, 1);
  fused.set_value_rn(0, 0x1p120f);
  wrong.set_value_rn(0, -INFINITY);
  EXPECT_TRUE(compare_accuracy("out", fused, {e}).ok());
  EXPECT_FALSE(compare_accuracy("out", wrong, {e}).ok());
}

// Found by fuzz_gate_residual: f16 res = +Inf and gate*y = 52544 * -1.671875,
// a product that rounds to -Inf in f16. Two roundings give +Inf + -Inf = NaN;
// a one-rounding evaluation gives +Inf. Both are correct; -Inf or a finite
// value is not.
TEST(OracleSpecialValues, InfiniteResidualPlusAnOverflowingProductMayBeNaN) {
  const Case c = one(DType::f16, INFINITY, 52544.0f, -1.671875f, 1);
  const Expected e = oracle_reference(c)["out"][0];
  EXPECT_EQ(e.kind, Expected::inf_or_nan);
  expect_host_passes(c);
  EXPECT_TRUE(std::isnan(run_host(c)["out"].value(0)));
  HostTensor fused(DType::f16, 1, 1), wrong(DType::f16, 1, 1), finite(DType::f16, 1, 1);
  fused.set_value_rn(0, INFINITY);
  wrong.set_value_rn(0, -INFINITY);
  finite.set_value_rn(0, 1.0f);
  EXPECT_TRUE(compare_accuracy("out", fused, {e}).ok());
  EXPECT_FALSE(compare_accuracy("out", wrong, {e}).ok());
  EXPECT_FALSE(compare_accuracy("out", finite, {e}).ok());
  // The same signs do not overflow into NaN: exactly +Inf.
  EXPECT_EQ(oracle_reference(one(DType::f16, INFINITY, 52544.0f, 1.671875f, 1))["out"][0].kind, Expected::pos_inf);
}

// Found by fuzz_gate_residual: f32 grad_gate of two rows, g*y = 2.03e38 *
// 1.51e38 (finite in float64, +Inf in fp32) and -1 * +Inf. The exact sum is
// -Inf, but every fp32 evaluation meets +Inf + -Inf = NaN. NaN and -Inf are
// correct; +Inf or a finite value is not.
TEST(OracleSpecialValues, InfiniteGradGateWithAnOverflowingFiniteTermMayBeNaN) {
  Case c = make_case(DType::f32, 2, 1, 1);
  c.input("y").set_bits(0, 0x7ee36f74);
  c.input("grad_out").set_bits(0, 0x7f18c3c2);
  c.input("y").set_bits(1, 0x7f800000);
  c.input("grad_out").set_bits(1, 0xbf800000);
  const Expected e = oracle_reference(c)["grad_gate"][0];
  EXPECT_EQ(e.kind, Expected::inf_or_nan);
  EXPECT_LT(e.value, 0);
  expect_host_passes(c);
  EXPECT_TRUE(std::isnan(run_host(c)["grad_gate"].value(0)));
  HostTensor neg(DType::f32, 1, 1), pos(DType::f32, 1, 1);
  neg.set_value_rn(0, -INFINITY);
  pos.set_value_rn(0, INFINITY);
  EXPECT_TRUE(compare_accuracy("grad_gate", neg, {e}).ok());
  EXPECT_FALSE(compare_accuracy("grad_gate", pos, {e}).ok());
  // Without the overflowing finite term the sum is exactly -Inf.
  c.input("grad_out").set_bits(0, 0x3f800000);
  c.input("y").set_bits(0, 0x3f800000);
  EXPECT_EQ(oracle_reference(c)["grad_gate"][0].kind, Expected::neg_inf);
}

TEST(OracleSpecialValues, GradYOverflowToInf) {
  const Case c = one(DType::f16, 0, 256, 1, -256);  // g*gate = -65536 >= 65520
  const Expected e = oracle_reference(c)["grad_y"][0];
  EXPECT_EQ(e.kind, Expected::finite_or_inf);
  expect_host_passes(c);
  EXPECT_EQ(run_host(c)["grad_y"].bits(0), 0xfc00u);
}

// bf16 terms of 2^200 overflow fp32: the outcome depends on the order.
TEST(OracleSpecialValues, GradGateFp32OverflowIsOrderDependent) {
  Case c = one(DType::bf16, 0, 1, 0x1p100f, 0x1p100f, 3);
  c.input("grad_out").set_value_rn(1, -0x1p100f);
  c.input("grad_out").set_value_rn(2, 1);  // exact sum 2^100
  const Expected e = oracle_reference(c)["grad_gate"][0];
  EXPECT_EQ(e.kind, Expected::finite_or_overflow);
  EXPECT_EQ(e.value, 0x1p100);
  expect_host_passes(c);
  EXPECT_TRUE(std::isnan(run_host(c)["grad_gate"].value(0)));  // +Inf + -Inf in fp32
  // The fp32 rounding of the 2^200 terms alone may cost gamma_2 * 2^201, so
  // every finite bf16 is within the bound here: only the kind says anything.
  EXPECT_GT(e.bound, 0x1p170);
  // fp32 partial sums: max + max overflows, though the exact sum is 0
  Case f = one(DType::f32, 0, 1, 0x1.fffffep127f, 1, 4);
  f.input("grad_out").set_value_rn(2, -1);
  f.input("grad_out").set_value_rn(3, -1);
  EXPECT_EQ(oracle_reference(f)["grad_gate"][0].kind, Expected::finite_or_overflow);
  expect_host_passes(f);
}

TEST(OracleSpecialValues, FinalRoundingOverflowOfGradGate) {
  Case c = one(DType::f16, 0, 1, 256, 128, 2);  // 2 * 32768 = 65536: Inf in fp16
  const Expected e = oracle_reference(c)["grad_gate"][0];
  EXPECT_EQ(e.kind, Expected::finite_or_inf);
  expect_host_passes(c);
}

TEST(OracleSpecialValues, ExactZeroSignsForOutAndGradY) {
  for (DType t : kAllDTypes) {
    const Expected mm = oracle_reference(one(t, -0.0f, 1, -0.0f, 1))["out"][0];  // -0 + (1*-0)
    EXPECT_EQ(mm.bound, 0.0);
    EXPECT_TRUE(std::signbit(mm.value));
    const Expected pm = oracle_reference(one(t, 0.0f, -1, 0.0f, 1))["out"][0];  // +0 + (-0)
    EXPECT_FALSE(std::signbit(pm.value));
    const Expected cancel = oracle_reference(one(t, 3, -1.5f, 2, 1))["out"][0];  // 3 - 3
    EXPECT_EQ(cancel.bound, 0.0);
    EXPECT_FALSE(std::signbit(cancel.value));
    const Expected gy = oracle_reference(one(t, 0, -2, 0, 0.0f))["grad_y"][0];  // +0 * -2
    EXPECT_TRUE(std::signbit(gy.value));
    for (const Case& c : {one(t, -0.0f, 1, -0.0f, 1), one(t, 0.0f, -1, 0.0f, 1), one(t, 3, -1.5f, 2, 1)})
      expect_host_passes(c);
    HostTensor wrong(t, 1, 1);
    wrong.set_bits(0, t == DType::f32 ? 0u : 0u);  // +0 where -0 is exact
    EXPECT_FALSE(compare_accuracy("out", wrong, {mm}).ok());
  }
}

TEST(OracleSpecialValues, GradGateZeros) {
  // unused gate and rows = 0: +0 exactly
  Case c = make_case(DType::bf16, 2, 1, 3);
  c.index = {0, 0};
  c.input("grad_out").set_value_rn(0, -0.0f);
  c.input("grad_out").set_value_rn(1, -0.0f);
  c.input("y").set_value_rn(0, 1);
  c.input("y").set_value_rn(1, 1);
  const Reference r = oracle_reference(c);
  HostTensor minus(DType::bf16, 3, 1);
  for (int64_t k = 0; k < 3; ++k) minus.set_bits(k, 0x8000);
  const Comparison cmp = compare_accuracy("grad_gate", minus, r["grad_gate"]);
  EXPECT_EQ(cmp.failed, 2);  // gates 1 and 2 are unused: -0 is wrong there
  EXPECT_EQ(cmp.first_bad, 1);
  // gate 0's terms are all -0: -0 (sum from the first term) is valid, +0 too
  expect_host_passes(c);
  // a non-zero exact cancellation: +0 required
  Case d = one(DType::f16, 0, 1, 2, 3, 2);
  d.input("grad_out").set_value_rn(1, -3);
  const Expected z = oracle_reference(d)["grad_gate"][0];
  EXPECT_EQ(z.bound, 0.0);
  HostTensor mz(DType::f16, 1, 1);
  mz.set_bits(0, 0x8000);
  EXPECT_FALSE(compare_accuracy("grad_gate", mz, {z}).ok());
  expect_host_passes(d);
}

TEST(OracleSpecialValues, SubnormalsAreJudgedWithTheirSpacing) {
  // fp16: 3 * 2^-24 + (2^-12 * 2^-12) = 4 * 2^-24, exact, a subnormal
  const Case c = one(DType::f16, 3 * 0x1p-24f, 0x1p-12f, 0x1p-12f, 0x1p-12f);
  const Expected e = oracle_reference(c)["out"][0];
  EXPECT_EQ(e.value, 4 * 0x1p-24);
  EXPECT_EQ(e.bound, 0.0);
  expect_host_passes(c);
  HostTensor flushed(DType::f16, 1, 1);  // flush-to-zero is wrong
  EXPECT_FALSE(compare_accuracy("out", flushed, {e}).ok());
  // grad_y underflows below half the smallest subnormal: 0 within the bound
  const Expected gy = oracle_reference(one(DType::f16, 0, 0x1p-13f, 0, 0x1p-13f))["grad_y"][0];
  EXPECT_EQ(gy.value, 0x1p-26);
  EXPECT_EQ(gy.bound, 0x1p-25 * kBoundMargin);
  EXPECT_TRUE(compare_accuracy("grad_y", flushed, {gy}).ok());
  // bf16 products below fp32's subnormals: charged 2^-150 each in grad_gate
  const Case u = one(DType::bf16, 0, 1, 0x1p-80f, 0x1p-80f, 4);
  EXPECT_GE(oracle_reference(u)["grad_gate"][0].bound, 4 * 0x1p-150);
  expect_host_passes(u);
}

TEST(OracleSpecialValues, GradResIsABitwiseCopyWithPayload) {
  Case c = make_case(DType::bf16, 1, 3, 1);
  c.input("grad_out").set_bits(0, 0x7fc1);  // a NaN with a payload
  c.input("grad_out").set_bits(1, 0x8000);  // -0
  c.input("grad_out").set_bits(2, 0xff80);  // -Inf
  const Reference r = oracle_reference(c);
  for (int64_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(r["grad_res"][size_t(i)].bitwise);
    EXPECT_EQ(r["grad_res"][size_t(i)].bits, c.input("grad_out").bits(i));
  }
  EXPECT_TRUE(compare_accuracy("grad_res", run_host(c)["grad_res"], r["grad_res"]).ok());
  HostTensor canonical = c.input("grad_out");
  canonical.set_bits(0, 0x7fc0);
  EXPECT_FALSE(compare_accuracy("grad_res", canonical, r["grad_res"]).ok());
}

// The oracle judges valid problems only; a malformed case is the caller's bug.
TEST(OracleSpecialValues, MalformedCaseIsRejected) {
  Case c = make_case(DType::f16, 2, 3, 2);
  c.index[1] = 2;
  EXPECT_THROW(oracle_reference(c), std::invalid_argument);
  EXPECT_THROW(eager_model(c), std::invalid_argument);
  c.index[1] = 0;
  c.input("y") = HostTensor(DType::f16, 1, 3);
  EXPECT_THROW(oracle_reference(c), std::invalid_argument);
  c.input("y") = HostTensor(DType::bf16, 2, 3);
  EXPECT_THROW(oracle_reference(c), std::invalid_argument);
  c.input("y") = HostTensor(DType::f16, 2, 3);
  EXPECT_NO_THROW(oracle_reference(c));
}

}  // namespace
}  // namespace gatecheck::testing
