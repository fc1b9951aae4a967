// The scale tier's budget: what a draw is estimated to cost before it runs
// (properties/scale/scale_cost.h), and the time a scale slot may take
// (PairSchedule::scale_allowance): the share left, never past the slice.
#include <gtest/gtest.h>

#include <tuple>

#include "properties/engine/pair_schedule.h"
#include "properties/scale/scale_cost.h"
#include "kernels/gate_residual.h"
#include "kernels/rmsnorm_modulate.h"

namespace gatecheck {
namespace {

TEST(ScaleCost, PriorBeforeAnythingIsMeasured) {
  const ScaleCostModel m;
  std::string source;
  const ScaleCostFit f = m.fit("cuda@cuda", "repeatable", Device::cuda, &source);
  EXPECT_DOUBLE_EQ(f.per_unit, 1.0 / kScalePriorElementsPerSecond);
  EXPECT_DOUBLE_EQ(f.per_part, scale_prior_part_seconds(Device::cuda));
  EXPECT_NE(source.find("prior"), std::string::npos);
  EXPECT_FALSE(m.measured("cuda@cuda"));
  // A check without a batch plan is one call, with a call's time of its own.
  EXPECT_EQ(scale_cost_calls(0), 1);
  EXPECT_EQ(scale_cost_calls(10), 10);
  EXPECT_DOUBLE_EQ(m.estimate_seconds("cuda@cuda", "repeatable", Device::cuda, int64_t(2e9), 0),
                   2e9 / kScalePriorElementsPerSecond + scale_prior_part_seconds(Device::cuda));
  EXPECT_DOUBLE_EQ(m.estimate_seconds("cuda@cuda", "repeatable", Device::cuda, int64_t(2e9), 10),
                   2e9 / kScalePriorElementsPerSecond + 10 * scale_prior_part_seconds(Device::cuda));
}

// An implementation's first scale case is its warm-up, once (scale_check.cpp leaves it out).
TEST(ScaleCost, AnImplementationWarmsUpOnce) {
  ScaleCostModel m;
  EXPECT_TRUE(m.warm_up("cuda@cuda"));
  EXPECT_FALSE(m.warm_up("cuda@cuda"));
  EXPECT_TRUE(m.warm_up("cuda-repro@cuda"));
  EXPECT_FALSE(m.measured("cuda@cuda"));  // a warm-up is not a measurement
}

// The wait for the device a scale case should expect: the mean of its
// implementation's so far, none before any, and not a cost of the case.
TEST(ScaleCost, AWaitIsExpectedAsTheMeanOfThoseSeen) {
  ScaleCostModel m;
  EXPECT_EQ(m.expected_wait("cuda@cuda"), 0.0);
  m.record_wait("cuda@cuda", 0.3);
  m.record_wait("cuda@cuda", 0.0);
  m.record_wait("cuda@cuda", 0.6);
  EXPECT_DOUBLE_EQ(m.expected_wait("cuda@cuda"), 0.3);
  EXPECT_EQ(m.expected_wait("cuda-repro@cuda"), 0.0) << "another implementation's waits";
  EXPECT_FALSE(m.measured("cuda@cuda")) << "a wait is not a measured case";
}

TEST(ScaleCost, EstimateFollowsTheThroughputMeasuredForThePair) {
  ScaleCostModel m;
  m.record("cuda@cuda", "segment_invariance", 100'000'000, 0, 0.5);  // 2e8 elements a second
  m.record("cuda@cuda", "segment_invariance", 300'000'000, 0, 1.5);
  EXPECT_TRUE(m.measured("cuda@cuda"));
  auto est = [&](int64_t units) { return m.estimate_seconds("cuda@cuda", "segment_invariance", Device::cuda, units, 0); };
  EXPECT_NEAR(est(2'147'483'648), 10.74, 0.01);
  // A 2^31-element draw does not fit a 0.7 s share; a 65,535 x 256 one does.
  EXPECT_GT(est(int64_t(1) << 31), 0.7);
  EXPECT_LT(est(65535 * 256), 0.7);
}

TEST(ScaleCost, AnotherPropertyOfTheSameImplementationStandsInThenItsOwnRate) {
  ScaleCostModel m;
  const double call = scale_prior_part_seconds(Device::cpu);  // one case's own time, before two cases tell it
  m.record("host@cpu", "repeatable", 10'000'000, 0, 2.0);  // about 5e6 a second
  std::string source;
  EXPECT_DOUBLE_EQ(m.fit("host@cpu", "row_invariance", Device::cpu, &source).per_unit, (2.0 - call) / 1e7);
  EXPECT_NE(source.find("implementation"), std::string::npos);
  EXPECT_DOUBLE_EQ(m.fit("other@cpu", "row_invariance", Device::cpu).per_unit,
                   1.0 / kScalePriorElementsPerSecond);  // not another's
  m.record("host@cpu", "row_invariance", 10'000'000, 0, 0.5);
  EXPECT_DOUBLE_EQ(m.fit("host@cpu", "row_invariance", Device::cpu, &source).per_unit, (0.5 - call) / 1e7);
  EXPECT_NE(source.find("property"), std::string::npos);
  m.record("host@cpu", "row_invariance", 0, 0, 1.0);  // nothing to learn from
  m.record("host@cpu", "row_invariance", 5, 0, 0.0);
  EXPECT_DOUBLE_EQ(m.fit("host@cpu", "row_invariance", Device::cpu).per_unit, (0.5 - call) / 1e7);
}

// A check without a batch plan learns a case's own time beside its rate, once
// its cases differ in size: on a GPU a small case takes about as long as a case
// a hundred times its size (rmsnorm_modulate's cuda repeatable on an H100:
// 462,111 units in 0.015 s, 16.8 M in 0.021 s), and a rate alone would put a
// 2^31-element draw at tens of seconds.
TEST(ScaleCost, ACaseOwnTimeIsLearnedWithoutAPlan) {
  ScaleCostModel m;
  m.record("cuda@cuda", "repeatable", 462'111, 0, 0.015);
  m.record("cuda@cuda", "repeatable", 16'800'000, 0, 0.021);
  m.record("cuda@cuda", "repeatable", 33'800'000, 0, 0.030);
  const ScaleCostFit f = m.fit("cuda@cuda", "repeatable", Device::cuda);
  EXPECT_GT(f.per_part, 0.005);  // a case's own time
  EXPECT_LT(f.per_part, 0.016);
  const double big = m.estimate_seconds("cuda@cuda", "repeatable", Device::cuda, int64_t(1) << 31, 0);
  EXPECT_LT(big, 2.0);  // such cases took 0.2 to 0.4 s there
  // The rate alone (all time on the elements) would say about 1.5 s a 10^8 units.
  const double by_rate = (0.015 + 0.021 + 0.030) / (462'111 + 16'800'000 + 33'800'000.0) * double(int64_t(1) << 31);
  EXPECT_GT(by_rate, 2.0);
}

// A part's own time, learned: the first ten row_invariance scale cases of
// one CPU run of rmsnorm_modulate's host-repro (units, parts, seconds), then
// two it ran later, small cases in many parts: 711 x 7 in 59 parts took
// 0.078 s and 582 x 3 in 58 parts 0.041 s, where the rate of the ten, all
// time on the elements, says 0.002 s for each. The fit of the ten says about
// 2.7 ms a part (0.6 to 0.9 over the whole run): over, by 2 and 4 times, which
// skips a draw, where the rate alone ran the case at forty times its share.
TEST(ScaleCost, APartsOwnTimeIsLearned) {
  ScaleCostModel m;
  const struct {
    int64_t units, parts;
    double seconds;
  } ten[] = {{1051524, 39, 0.271}, {2722593, 37, 0.211}, {2418560, 2, 0.304}, {217156, 2, 0.031},
             {262200, 6, 0.039},   {1306328, 2, 0.108},  {249515, 2, 0.022},  {168392, 4, 0.046},
             {1056768, 4, 0.240},  {1843588, 13, 0.173}};
  double units = 0, seconds = 0;
  for (const auto& c : ten) {
    m.record("host-repro@cpu", "row_invariance", c.units, c.parts, c.seconds);
    units += double(c.units);
    seconds += c.seconds;
  }
  const ScaleCostFit f = m.fit("host-repro@cpu", "row_invariance", Device::cpu);
  EXPECT_GT(f.per_part, 0.5e-3);
  EXPECT_LT(f.per_part, 5e-3);
  for (const auto& [u, p, took] : {std::tuple<int64_t, int64_t, double>{14589, 59, 0.078}, {17625, 58, 0.041}}) {
    EXPECT_LT(double(u) * seconds / units, took / 10);  // the rate alone: ten times short and more
    const double est = m.estimate_seconds("host-repro@cpu", "row_invariance", Device::cpu, u, p);
    EXPECT_GT(est, took);
    EXPECT_LT(est, took * 5);
  }
}

// Where parts cost nothing of their own (split_invariance on the CPU), the
// fit says so, never a credit a part, and the rate is the measured one.
TEST(ScaleCost, NoPartTimeWhereTheCasesShowNone) {
  ScaleCostModel m;
  m.record("host@cpu", "split_invariance", 1'000'000, 50, 0.1);
  m.record("host@cpu", "split_invariance", 3'000'000, 2, 0.3);
  m.record("host@cpu", "split_invariance", 100'000, 60, 0.008);  // faster than the rate says
  const ScaleCostFit f = m.fit("host@cpu", "split_invariance", Device::cpu);
  EXPECT_EQ(f.per_part, 0);
  EXPECT_NEAR(f.per_unit, 0.408 / 4.1e6, 1e-15);
}

// One case in many parts: its time is split by the prior's time a part, at
// most half to the parts, so that the next draws neither take it all as the
// elements' nor ignore the parts.
TEST(ScaleCost, OneCaseSplitsItsTimeByThePrior) {
  const OpSchema& op = rmsnorm_modulate_schema();
  ScaleCostModel m;
  const int64_t first = scale_cost_units(op, Device::cuda, 513, 8, 2, 30);
  m.record("cuda-repro@cuda", "split_invariance", first, 30, 0.5);
  const ScaleCostFit f = m.fit("cuda-repro@cuda", "split_invariance", Device::cuda);
  EXPECT_NEAR(f.per_part, 0.25 / 30, 1e-12);  // the prior's 20 ms, held to half of 0.5 s
  EXPECT_NEAR(f.seconds(first, 30), 0.5, 1e-12);
  // Its size in more parts costs more; twice its size in as many, less than twice.
  EXPECT_GT(f.seconds(first, 60), 0.7);
  EXPECT_LT(f.seconds(2 * first, 30), 0.8);
  ScaleCostModel cpu;  // on the CPU the prior is 0.5 ms a part
  cpu.record("host@cpu", "row_invariance", 10'000, 20, 0.1);
  EXPECT_NEAR(cpu.fit("host@cpu", "row_invariance", Device::cpu).per_part, 0.5e-3, 1e-15);
}

// A part's own time as the case's calls measured it (ScaleCallTimes), where it
// is more than the split of one total gives: the H200's rmsnorm_modulate split
// tier ran a first case of 513 x 8 in about 30 parts in 0.5 s, nearly all of
// it the exchange's 20 ms a part, and with half of it given to the elements
// every later draw of 65,536 rows looked too slow for the 7 s its share had left.
TEST(ScaleCost, APartsMeasuredOwnTimeStandsWhereItIsMore) {
  const OpSchema& op = rmsnorm_modulate_schema();
  const int64_t first = scale_cost_units(op, Device::cuda, 513, 8, 2, 30);
  const int64_t next = scale_cost_units(op, Device::cuda, 65536, 8, 9, 64);
  ScaleCostModel split, measured;
  split.record("cuda-repro@cuda", "split_invariance", first, 30, 0.5);
  measured.record("cuda-repro@cuda", "split_invariance", first, 30, 0.5, 0.47);
  const ScaleCostFit a = split.fit("cuda-repro@cuda", "split_invariance", Device::cuda);
  const ScaleCostFit b = measured.fit("cuda-repro@cuda", "split_invariance", Device::cuda);
  EXPECT_NEAR(b.per_part, 0.47 / 30, 1e-12);
  EXPECT_NEAR(b.seconds(first, 30), 0.5, 1e-12);  // the case's own time, still
  EXPECT_GT(a.seconds(next, 64), 20.0);           // skipped
  EXPECT_LT(b.seconds(next, 64), 5.0);            // fits: 64 parts of 15.7 ms, and its elements
  // Held under all of the time: a measurement past it leaves the elements 5%.
  ScaleCostModel over;
  over.record("cuda-repro@cuda", "split_invariance", first, 30, 0.5, 0.9);
  EXPECT_NEAR(over.fit("cuda-repro@cuda", "split_invariance", Device::cuda).per_part, 0.95 * 0.5 / 30, 1e-12);
}

// A part's measured own time below what the model already gives parts (on
// the CPU, where parts cost little) changes nothing.
TEST(ScaleCost, APartsMeasuredOwnTimeBelowTheFitChangesNothing) {
  ScaleCostModel plain, measured;
  for (ScaleCostModel* m : {&plain, &measured}) {
    m->record("host@cpu", "row_invariance", 1'000'000, 40, 0.30, m == &measured ? 0.001 : -1);
    m->record("host@cpu", "row_invariance", 200'000, 60, 0.10, m == &measured ? 0.002 : -1);
  }
  const ScaleCostFit a = plain.fit("host@cpu", "row_invariance", Device::cpu);
  const ScaleCostFit b = measured.fit("host@cpu", "row_invariance", Device::cpu);
  EXPECT_DOUBLE_EQ(a.per_part, b.per_part);
  EXPECT_DOUBLE_EQ(a.per_unit, b.per_unit);
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
  m.record("cuda@cuda", "full_write", units(32768, 5376), 0, 0.5);
  const double wide = m.estimate_seconds("cuda@cuda", "full_write", Device::cuda, units(32768, 5376), 0);
  const double tall = m.estimate_seconds("cuda@cuda", "full_write", Device::cuda, units(16776960, 1), 0);
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
  m.record("host-repro@cpu", "split_invariance", scale_cost_units(op, Device::cpu, 131072, 15, 1, 10), 10, 0.4221);
  const int64_t many = scale_cost_units(op, Device::cpu, 65535, 9, 65535, 56);
  EXPECT_GT(m.estimate_seconds("host-repro@cpu", "split_invariance", Device::cpu, many, 56), 2.9692);
  // No split, no state: rows and elements alone.
  EXPECT_EQ(scale_cost_units(op, Device::cpu, 65535, 9, 65535, 0), 65535 * 9 + 8 * 65535);
}
}  // namespace
}  // namespace gatecheck
