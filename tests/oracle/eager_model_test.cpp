// The eager rounding model: out, grad_res and grad_y bitwise equal to the
// host twin (both are the shared per-element math); grad_gate is a
// sequential index_add in the dtype, checked against hand-computed sums.
#include <gtest/gtest.h>

#include "oracle_test_support.h"

namespace gatecheck::testing {
namespace {

TEST(EagerModel, MatchesHostTwinBitwiseForRowOutputs) {
  uint64_t seed = 5000;
  for (DType t : kAllDTypes)
    for (Values v : kAllValues) {
      const Case c = random_case(t, 33, 9, 4, v, ++seed);
      const Outputs e = eager_model(c), h = run_host(c);
      for (const char* name : {"out", "grad_res", "grad_y"}) {
        const Comparison cmp = compare_bitwise(name, e[name], h[name]);
        EXPECT_TRUE(cmp.ok()) << describe(c) << " seed " << seed << "\n" << cmp.summary();
      }
    }
}

// fp32: index_add in fp32 is a sequential fp32 sum from +0 in row order.
TEST(EagerModel, Fp32GradGateIsTheSequentialSum) {
  const Case c = random_case(DType::f32, 700, 3, 2, Values::normal, 5100);
  const HostTensor sequential = grad_gate_with_order(c, Order::row);
  EXPECT_TRUE(compare_bitwise("grad_gate", eager_model(c)["grad_gate"], sequential).ok());
  // ...which is not the reversed order, so the check can fail
  EXPECT_FALSE(compare_bitwise("grad_gate", eager_model(c)["grad_gate"], grad_gate_with_order(c, Order::reversed)).ok());
}

// bf16: each step rounds to bf16. 1 + 2^-8 + 2^-8: the first add rounds
// back to 1 (tie to even), so eager gives 1 where fp32 accumulation gives
// 1 + 2^-7.
TEST(EagerModel, Bf16GradGateRoundsEveryStep) {
  Case c = make_case(DType::bf16, 3, 1, 1);
  const float terms[] = {1, 0x1p-8f, 0x1p-8f};
  for (int64_t r = 0; r < 3; ++r) { c.input("grad_out").set_value_rn(r, terms[r]); c.input("y").set_value_rn(r, 1); }
  EXPECT_EQ(eager_model(c)["grad_gate"].value(0), 1.0f);
  EXPECT_EQ(run_host(c)["grad_gate"].value(0), 1 + 0x1p-7f);
  // unused gates stay +0
  Case d = make_case(DType::bf16, 1, 2, 3);
  d.index = {1};
  const Outputs e = eager_model(d);
  for (int64_t k = 0; k < 6; ++k) EXPECT_EQ(e["grad_gate"].bits(k), 0u);
}

}  // namespace
}  // namespace gatecheck::testing
