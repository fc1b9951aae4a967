// The scale tier's budget: what a draw is estimated to cost before it runs
// (properties/scale/scale_cost.h), and the time a scale slot may take
// (PairSchedule::scale_allowance): the share left, never past the slice.
#include <gtest/gtest.h>

#include "properties/engine/pair_schedule.h"
#include "properties/scale/scale_cost.h"
#include "kernels/gate_residual.h"
#include "kernels/rmsnorm_modulate.h"

namespace gatecheck {
namespace {

TEST(ScaleCost, PriorBeforeAnythingIsMeasured) {
  const ScaleCostModel m;
  std::string source;
  EXPECT_DOUBLE_EQ(m.rate("cuda@cuda", "repeatable", &source), kScalePriorElementsPerSecond);
  EXPECT_NE(source.find("prior"), std::string::npos);
  EXPECT_FALSE(m.measured("cuda@cuda"));
  EXPECT_DOUBLE_EQ(m.estimate_seconds("cuda@cuda", "repeatable", int64_t(2e9)), 2e9 / kScalePriorElementsPerSecond);
}

TEST(ScaleCost, EstimateFollowsTheThroughputMeasuredForThePair) {
  ScaleCostModel m;
  m.record("cuda@cuda", "segment_invariance", 100'000'000, 0.5);  // 2e8 elements a second
  m.record("cuda@cuda", "segment_invariance", 300'000'000, 1.5);
  EXPECT_TRUE(m.measured("cuda@cuda"));
  EXPECT_NEAR(m.estimate_seconds("cuda@cuda", "segment_invariance", 2'147'483'648), 10.74, 0.01);
  // A 2^31-element draw does not fit a 0.7 s share; a 65,535 x 256 one does.
  EXPECT_GT(m.estimate_seconds("cuda@cuda", "segment_invariance", int64_t(1) << 31), 0.7);
  EXPECT_LT(m.estimate_seconds("cuda@cuda", "segment_invariance", 65535 * 256), 0.7);
}

TEST(ScaleCost, AnotherPropertyOfTheSameImplementationStandsInThenItsOwnRate) {
  ScaleCostModel m;
  m.record("host@cpu", "repeatable", 10'000'000, 2.0);  // 5e6 a second
  std::string source;
  EXPECT_DOUBLE_EQ(m.rate("host@cpu", "row_invariance", &source), 5e6);
  EXPECT_NE(source.find("implementation"), std::string::npos);
  EXPECT_DOUBLE_EQ(m.rate("other@cpu", "row_invariance"), kScalePriorElementsPerSecond);  // not another's
  m.record("host@cpu", "row_invariance", 10'000'000, 0.5);
  EXPECT_DOUBLE_EQ(m.rate("host@cpu", "row_invariance", &source), 2e7);
  EXPECT_NE(source.find("property"), std::string::npos);
  m.record("host@cpu", "row_invariance", 0, 1.0);  // nothing to learn from
  m.record("host@cpu", "row_invariance", 5, 0.0);
  EXPECT_DOUBLE_EQ(m.rate("host@cpu", "row_invariance"), 2e7);
}

TEST(ScaleAllowance, TheShareLeftAndNeverPastTheSlice) {
  // A 4 s slice with a quarter for the scale tier: 1 s in all.
  EXPECT_DOUBLE_EQ(PairSchedule::scale_allowance(0.25, 4.0, 0.0, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(PairSchedule::scale_allowance(0.25, 4.0, 1.0, 0.6), 0.4);
  EXPECT_NEAR(PairSchedule::scale_allowance(0.25, 4.0, 3.8, 0.0), 0.2, 1e-12);  // the slice ends first
  EXPECT_DOUBLE_EQ(PairSchedule::scale_allowance(0.25, 4.0, 2.0, 1.5), 0.0);  // overspent: nothing, not negative
  EXPECT_DOUBLE_EQ(PairSchedule::scale_allowance(0.25, 4.0, 5.0, 0.0), 0.0);
}

}  // namespace
}  // namespace gatecheck

namespace gatecheck {
namespace {
// A tall, narrow case costs more than its elements alone say: a rate learned
// from wide cases must not admit 16 million one-column rows as cheap.
TEST(ScaleCost, RowsWeighOnTheirOwn) {
  ScaleCostModel m;
  const OpSchema& op = gate_residual_schema();
  auto units = [&](int64_t rows, int64_t dim) { return scale_cost_units(op, Device::cuda, rows, dim, 9, 0); };
  m.record("cuda@cuda", "full_write", units(32768, 5376), 0.5);
  const double wide = m.estimate_seconds("cuda@cuda", "full_write", units(32768, 5376));
  const double tall = m.estimate_seconds("cuda@cuda", "full_write", units(16776960, 1));
  EXPECT_NEAR(wide, 0.5, 1e-9);
  // what the H200 measured: 2.0 to 3.0 s where elements alone said 0.01 s
  EXPECT_GT(tall, 16776960.0 / (32768.0 * 5376) * 0.5 * 200);
}

// The row reductions a split's parts each bring to the host: dshift and
// dscale (gates x dim each) and dweight (dim) for rmsnorm_modulate, grad_gate
// alone for gate_residual.
TEST(ScaleCost, ReducedElementsAreTheOpsRowReductions) {
  EXPECT_EQ(reduced_elements(rmsnorm_modulate_schema(), 8191, 127), (2 * 127 + 1) * 8191);
  EXPECT_EQ(reduced_elements(gate_residual_schema(), 17, 61680), 61680 * 17);
}

// A split's states weigh a part each. Two cases of one CPU run of
// rmsnorm_modulate's host-repro: 131,072 x 15 with one gate in 10 parts took
// 0.42 s; 65,535 x 9 with 65,535 gates in 56 parts took 2.97 s. Rows and
// elements alone, at the first's rate, said 0.20 s for the second.
TEST(ScaleCost, SplitStatesWeighAPartEach) {
  const OpSchema& op = rmsnorm_modulate_schema();
  ScaleCostModel m;
  m.record("host-repro@cpu", "split_invariance", scale_cost_units(op, Device::cpu, 131072, 15, 1, 10), 0.4221);
  const int64_t many = scale_cost_units(op, Device::cpu, 65535, 9, 65535, 56);
  EXPECT_GT(m.estimate_seconds("host-repro@cpu", "split_invariance", many), 2.9692);
  // No split, no state: rows and elements alone.
  EXPECT_EQ(scale_cost_units(op, Device::cpu, 65535, 9, 65535, 0), 65535 * 9 + 8 * 65535);
}
}  // namespace
}  // namespace gatecheck
