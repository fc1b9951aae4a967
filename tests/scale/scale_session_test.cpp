// The properties at scale on the CPU (properties/scale_properties.h): each
// passes on the host twin and on correct alternatives, and each fails on a
// planted bug of its kind, at sizes this machine holds in well under a second.
#include <gtest/gtest.h>

#include <set>

#include "harness/scale/scale_backend.h"
#include "harness/scale/scale_session.h"
#include "harness/scale/scale_stress.h"
#include "properties/mutants/mutant_implementations.h"
#include "properties/scale/scale_properties.h"
#include "tests/properties/broken_impls.h"
#include "tests/scale/test_scale_spec.h"

namespace gatecheck {
namespace {

Subject mutant(const std::string& name) {
  for (auto& m : planted_mutants())
    if (m.name == name) return m;
  for (auto& m : correct_alternatives())
    if (m.name == name) return m;
  throw std::invalid_argument("no mutant " + name);
}

ScaleCase scale_case(DType t, int64_t rows, int64_t dim, int64_t gates, ScaleValues v, const std::string& pattern = "uniform",
                     int64_t segment = 0, const std::string& plan = "partition") {
  return test::scale_case(21, t, rows, dim, gates, v, pattern, segment, plan);
}

Subject host() { return make_subject("host", Device::cpu); }

TEST(ScaleAccuracy, ExactValuesCheckEveryElementOnHost) {
  const ScaleCase c = scale_case(DType::bf16, 70000, 3, 9, ScaleValues::exact, "long_segment", 65536);
  ASSERT_EQ(exact_values_problem(c), "");
  const Verdict v = check_scale_property("accuracy", host(), c);
  EXPECT_TRUE(v.passed) << v.message;
  EXPECT_EQ(v.compared, 3 * 70000 * 3 + 9 * 3);  // every element of every output
}

TEST(ScaleAccuracy, ExactCheckFindsTheOneWrongElement) {
  const ScaleCase c = scale_case(DType::f16, 70001, 2, 5, ScaleValues::exact);
  const Verdict v = check_scale_property("accuracy", testing::broken(testing::Bug::out_off_by_much), c);
  ASSERT_FALSE(v.passed);
  ASSERT_EQ(v.comparisons.size(), 1u);
  EXPECT_EQ(v.comparisons[0].tensor, "out");
  EXPECT_EQ(v.comparisons[0].failed, 1);
  EXPECT_EQ(v.comparisons[0].first[0].row, 70000);
  EXPECT_EQ(v.comparisons[0].first[0].col, 1);
}

// Rounding values: the float64 oracle on a sample. It passes the host and the
// correct alternatives, and sees what lands in the sample: the last row (in
// every sample) left unwritten, an unused gate (in every sample) left unwritten.
// (Its bounds are the worst case over every order, gamma_n * sum|terms| for a
// gate of n rows, so on long segments only exact values see a small error.)
TEST(ScaleAccuracy, SampledOracleOnRoundingValues) {
  for (ScaleValues vals : {ScaleValues::rounding, ScaleValues::cancelling}) {
    const ScaleCase c = scale_case(DType::bf16, 65537, 4, 64, vals, "unused_gates");
    for (const Subject& s : {host(), mutant("alt:fused-forward"), mutant("alt:pairwise-grad-gate")}) {
      const Verdict v = check_scale_property("accuracy", s, c);
      EXPECT_TRUE(v.passed) << s.name << ": " << v.message;
      EXPECT_GT(v.compared, 0);
    }
    const Verdict row = check_scale_property("accuracy", mutant("mutant:skipped-row"), c);
    ASSERT_FALSE(row.passed);
    EXPECT_EQ(row.failed_outputs, std::vector<std::string>{"out"}) << row.message;
    EXPECT_EQ(row.comparisons[0].first[0].row, 65536);
    EXPECT_NE(row.message.find("float64 oracle on a sample"), std::string::npos) << row.message;
    const Verdict gate = check_scale_property("accuracy", mutant("mutant:unwritten-unused-gate"), c);
    ASSERT_FALSE(gate.passed);
    EXPECT_EQ(gate.failed_outputs, std::vector<std::string>{"grad_gate"}) << gate.message;
  }
}

TEST(ScaleRepeatable, HostIsRepeatableUnderStress) {
  const ScaleCase c = scale_case(DType::f32, 20000, 4, 2, ScaleValues::rounding, "long_segment", 16384);
  const Verdict v = check_scale_property("repeatable", host(), c);
  EXPECT_TRUE(v.passed) << v.message;
}

// Float atomics in the order threads finish: the reruns must see it.
TEST(ScaleRepeatable, ScheduleDependentSumsShow) {
  const Subject racy = make_subject(std::string("plugin:") + GC_SCALE_RACY_SUM, Device::cpu);
  int failed = 0;
  std::string msg;
  for (int k = 0; k < 4 && !failed; ++k) {
    ScaleCase c = scale_case(DType::f32, 30000 + k, 8, 2, ScaleValues::cancelling, "long_segment", 20000);
    ScaleCheckOptions o;
    o.stress_seed = uint64_t(k);
    const Verdict v = check_scale_property("repeatable", racy, c, o);
    if (!v.passed) {
      ++failed;
      msg = v.message;
      EXPECT_EQ(v.failed_outputs, std::vector<std::string>{"grad_gate"}) << v.message;
    }
  }
  EXPECT_EQ(failed, 1) << "four cases of 30,000 rows with a 20,000-row segment never showed the racy sums";
  EXPECT_NE(msg.find("differs from call 1 (unperturbed)"), std::string::npos) << msg;
}

TEST(ScaleInvariance, HostAndAlternativesAreInvariant) {
  for (const std::string plan : {"prior_art", "permutation", "gate_groups", "probe"}) {
    const ScaleCase c = scale_case(DType::bf16, 33000, 3, 7, ScaleValues::rounding, "sorted_random", 0, plan);
    for (const Subject& s : {host(), mutant("alt:fused-forward")})
      for (const char* p : {"row_invariance", "segment_invariance"}) {
        const Verdict v = check_scale_property(p, s, c);
        EXPECT_TRUE(v.passed || v.vacuous) << s.name << " " << p << " " << plan << ": " << v.message;
      }
  }
}

TEST(ScaleInvariance, PlantedInvarianceBugsFail) {
  // grad_gate tiles cut at absolute row positions: a whole segment at another offset sums differently
  const ScaleCase seg = scale_case(DType::f32, 40000, 4, 5, ScaleValues::rounding, "sorted_random", 0, "gate_groups");
  const Verdict v = check_scale_property("segment_invariance", mutant("mutant:absolute-row-tiles"), seg);
  ASSERT_FALSE(v.passed);
  EXPECT_FALSE(v.vacuous);
  EXPECT_EQ(v.failed_outputs, std::vector<std::string>{"grad_gate"});
  // an FMA path for batches of 64 rows or more: a row alone rounds differently
  const ScaleCase rows = scale_case(DType::f32, 40000, 4, 5, ScaleValues::rounding, "uniform", 0, "singletons");
  const Verdict r = check_scale_property("row_invariance", mutant("mutant:fused-large-batch"), rows);
  ASSERT_FALSE(r.passed);
  EXPECT_EQ(r.failed_outputs, std::vector<std::string>{"out"}) << r.message;
  EXPECT_NE(r.message.find("rows differ from the full batch's"), std::string::npos) << r.message;
}

TEST(ScaleMemory, GridLimitRowsAreNeverWritten) {
  const Subject grid = make_subject(std::string("plugin:") + GC_SCALE_GRID_LIMIT, Device::cpu);
  const ScaleCase below = scale_case(DType::bf16, 65535, 2, 3, ScaleValues::rounding);
  for (const char* p : {"accuracy", "full_write", "no_oob_write", "inputs_untouched"})
    EXPECT_TRUE(check_scale_property(p, grid, below).passed) << p;
  const ScaleCase past = scale_case(DType::bf16, 65537, 2, 3, ScaleValues::rounding);
  const Verdict fw = check_scale_property("full_write", grid, past);
  ASSERT_FALSE(fw.passed);
  ASSERT_FALSE(fw.memory.empty());
  EXPECT_EQ(fw.memory[0].count, 2 * 2);  // rows 65,535 and 65,536 of out
  EXPECT_NE(fw.memory[0].detail.find("first at [65535, 0]"), std::string::npos) << fw.memory[0].detail;
  EXPECT_FALSE(check_scale_property("accuracy", grid, past).passed);
}

TEST(ScaleMemory, WritesOutsideAndIntoInputsAreSeen) {
  const ScaleCase c = scale_case(DType::f32, 66000, 2, 3, ScaleValues::rounding, "uniform", 0, "partition");
  const Verdict oob = check_scale_property("no_oob_write", testing::broken(testing::Bug::writes_past_out), c);
  ASSERT_FALSE(oob.passed);
  EXPECT_EQ(oob.memory[0].tensor, "out");
  const Verdict in = check_scale_property("inputs_untouched", testing::broken(testing::Bug::writes_y), c);
  ASSERT_FALSE(in.passed);
  EXPECT_EQ(in.memory[0].tensor, "y");
  for (const char* p : {"no_oob_write", "inputs_untouched", "full_write"})
    EXPECT_TRUE(check_scale_property(p, host(), c).passed) << p;
}

// A sub-batch shorter than the buffers: a write just past its end lands in the
// canary-filled tail, and is seen.
TEST(ScaleSession, WritePastAShortBatchIsSeen) {
  const ScaleCase c = scale_case(DType::bf16, 1000, 4, 3, ScaleValues::rounding);
  ScaleSession s(testing::broken(testing::Bug::writes_past_out), c, 1);
  std::vector<int64_t> batch;
  for (int64_t r = 0; r < 10; ++r) batch.push_back(r);
  ASSERT_TRUE(s.run(0, &batch).ok());
  const auto g = s.guards();
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].tensor, std::string("out"));
  EXPECT_EQ(g[0].first, 10 * 4 * 2);  // the first byte past the batch's 10 rows
}

// The parts' own time: their time past the whole batch's time a row.
TEST(ScaleCallTimes, PartsOwnTimeIsTheirsPastTheWholesRate) {
  ScaleCallTimes t;
  EXPECT_EQ(t.parts_own_seconds(), -1);  // nothing ran
  t.whole_seconds = 1.0;
  t.whole_rows = 1000;
  EXPECT_EQ(t.parts_own_seconds(), -1);  // no part
  t.part_seconds = 3.0;
  t.part_rows = 1000;
  t.part_calls = 10;
  EXPECT_DOUBLE_EQ(t.parts_own_seconds(), 2.0);
  t.part_seconds = 0.5;  // faster than the whole's rate (noise): none, not a credit
  EXPECT_DOUBLE_EQ(t.parts_own_seconds(), 0.0);
}

// A check's calls are timed by kind: the whole batch, and each batch of its plan.
TEST(ScaleCallTimes, AnInvarianceCheckTimesTheWholeAndEachPart) {
  const ScaleCase c = scale_case(DType::f32, 3000, 4, 5, ScaleValues::rounding, "uniform", 0, "gate_groups");
  ASSERT_TRUE(c.plan);
  int64_t parts = 0, part_rows = 0;
  for (const auto& b : c.plan->batches)
    if (!b.empty() && int64_t(b.size()) != c.rows) {
      ++parts;
      part_rows += int64_t(b.size());
    }
  ASSERT_GE(parts, 2);
  ScaleCallTimes t;
  ScaleCheckOptions o;
  o.times = &t;
  const Verdict v = check_scale_property("segment_invariance", host(), c, o);
  EXPECT_TRUE(v.passed) << v.message;
  EXPECT_EQ(t.whole_rows, c.rows);
  EXPECT_EQ(t.part_calls, parts);
  EXPECT_EQ(t.part_rows, part_rows);
  EXPECT_GT(t.whole_seconds, 0);
  EXPECT_GT(t.part_seconds, 0);
  EXPECT_GE(t.parts_own_seconds(), 0);
}

TEST(ScaleSession, DoesNotFitIsASkipNotAVerdict) {
  const ScaleCase c = scale_case(DType::bf16, 1000, 4, 3, ScaleValues::rounding);
  ScaleCheckOptions o;
  o.memory_bytes = 1000;
  EXPECT_THROW(check_scale_property("accuracy", host(), c, o), ScaleNoMemory);
}

TEST(ScaleFingerprint, OneBitChangesTheRowsPrint) {
  auto b = make_host_scale_backend();
  std::vector<uint16_t> t(3 * 5, 0x3f80);
  uint64_t p1[3], p2[3];
  b->row_prints(t.data(), 3, 5, DType::bf16, p1);
  t[7] ^= 1;
  b->row_prints(t.data(), 3, 5, DType::bf16, p2);
  EXPECT_EQ(p1[0], p2[0]);
  EXPECT_NE(p1[1], p2[1]);
  EXPECT_EQ(p1[2], p2[2]);
  EXPECT_EQ(p1[0], p1[1]);  // the same bits, the same print
}

TEST(ScaleStress, ScheduleIsDeterministicAndEveryRunDiffers) {
  const auto a = stress_schedule(7, 9, 132), b = stress_schedule(7, 9, 132);
  ASSERT_EQ(a.size(), 9u);
  EXPECT_EQ(a, b);
  EXPECT_FALSE(a[0].active);
  std::set<int> priorities, units;
  for (size_t i = 1; i < a.size(); ++i) {
    EXPECT_TRUE(a[i].active);
    for (size_t j = 0; j < i; ++j) EXPECT_FALSE(a[i] == a[j]) << i << " " << j;
    priorities.insert(a[i].priority);
    units.insert(a[i].noise_units);
    EXPECT_GE(a[i].noise_units, 1);
    EXPECT_LE(a[i].noise_units, 131);
  }
  EXPECT_EQ(priorities, (std::set<int>{0, 1, 2}));
  EXPECT_EQ(units, (std::set<int>{33, 66, 99, 131}));
  EXPECT_NE(stress_schedule(8, 9, 132), a);
  // on the CPU a setting spins threads around the call and then lets them go
  StressScope scope(Device::cpu, a[3]);
  EXPECT_EQ(scope.stream(), nullptr);
}

}  // namespace
}  // namespace gatecheck
