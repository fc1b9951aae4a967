// split_invariance both ways: a framework-style combine (host, rmsnorm's host)
// fails it, host-repro's exchange passes it for every split drawn, and an
// exchange that loses a part fails it.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "case/case_spec.h"
#include "harness/run/split_runner.h"
#include "harness/run/stage_clock.h"
#include "kernels/host/gate_residual_repro_host.h"
#include "kernels/rmsnorm_modulate.h"
#include "properties/checks/properties.h"

namespace gatecheck {
namespace {

BatchPlan split_of(const std::string& kind, std::vector<std::vector<int64_t>> parts) {
  BatchPlan p;
  p.kind = kind;
  p.batches = std::move(parts);
  return p;
}

// f32, one gate, one column: g*y terms 1, 2^-24, 2^-24. The full batch sums
// them in one fp32 order (1, then 1 again: each 2^-24 is a tie to even); a
// split {0 | 1 2} sums 2^-24 + 2^-24 first and ends at 1 + 2^-23.
Case three_terms() {
  Case c = make_case(DType::f32, 3, 1, 1);
  const float terms[3] = {1.0f, std::ldexp(1.0f, -24), std::ldexp(1.0f, -24)};
  for (int r = 0; r < 3; ++r) {
    c.input("grad_out").set_value_rn(r, terms[r]);
    c.input("y").set_value_rn(r, 1.0f);
  }
  c.plan = split_of("ranks", {{0}, {1, 2}});
  return c;
}

TEST(SplitInvariance, FrameworkSumFailsAndNamesTheSplitAndElement) {
  const Implementation host = make_implementation("host", Device::cpu);
  const Verdict v = check_property("split_invariance", host, three_terms());
  ASSERT_FALSE(v.passed);
  EXPECT_FALSE(v.vacuous);
  EXPECT_EQ(v.failed_outputs, std::vector<std::string>{"grad_gate"});
  EXPECT_NE(v.message.find("ranks split into 2 parts of 1, 2 rows {0 | 1 2}"), std::string::npos) << v.message;
  EXPECT_NE(v.message.find("the first at [0, 0]: split 0x3f800001 vs full batch 0x3f800000"), std::string::npos)
      << v.message;
  EXPECT_NE(v.message.find("summed in fp32 in rank order"), std::string::npos) << v.message;
}

TEST(SplitInvariance, ReproModePassesWhereTheSumFails) {
  const Implementation repro = make_implementation("host-repro", Device::cpu);
  const Verdict v = check_property("split_invariance", repro, three_terms());
  EXPECT_TRUE(v.passed) << v.message;
  EXPECT_EQ(v.compared, 1);
}

// Every split kind, 2 to 64 parts, every dtype, several value classes.
TEST(SplitInvariance, ReproModePassesEverySplitDrawn) {
  const Implementation repro = make_implementation("host-repro", Device::cpu);
  const Implementation host = make_implementation("host", Device::cpu);
  int host_failed = 0, checked = 0;
  for (DType t : {DType::bf16, DType::f16, DType::f32})
    for (const char* values : {"normal", "order_sensitive", "mixed_magnitude", "subnormal"})
      for (uint64_t seed = 1; seed <= 6; ++seed) {
        Case c = make_case(t, 300, 5, 4);
        c.index = make_index("uniform", c.rows, c.gates, seed);
        fill_values(&c, values, seed);
        c.plan = make_plan(split_plan_kinds()[seed % 3], c, seed * 7919);
        const Verdict v = check_property("split_invariance", repro, c);
        ASSERT_TRUE(v.passed) << describe(c) << ": " << v.message;
        host_failed += !check_property("split_invariance", host, c).passed;
        ++checked;
      }
  // The same cases split the framework way: most of them differ.
  EXPECT_GT(host_failed, checked / 2) << host_failed << " of " << checked;
}

// A declared exchange is held to it: one that loses the last part fails.
const gatecheck_split_exchange* real() { return gate_residual_repro_host_exchange(); }
int lossy_combine(const gatecheck_problem* p, const uint64_t* const* s, int32_t n, uint64_t* out) {
  return real()->combine(p, s, n > 1 ? n - 1 : n, out);
}

TEST(SplitInvariance, AnExchangeThatLosesAPartFails) {
  static gatecheck_split_exchange lossy = *real();
  lossy.combine = lossy_combine;
  Implementation impl = make_implementation("host-repro", Device::cpu);
  impl.exchange = &lossy;
  Case c = make_case(DType::bf16, 20, 3, 2);
  c.index = make_index("uniform", c.rows, c.gates, 3);
  fill_values(&c, "normal", 3);
  c.plan = make_plan("micro_batches", c, 3);
  const Verdict v = check_property("split_invariance", impl, c);
  ASSERT_FALSE(v.passed);
  EXPECT_NE(v.message.find("its declared exchange"), std::string::npos) << v.message;
}

// The same exchange declared by a plugin through ABI v2: it claims the
// property and passes; a plugin whose declared combine loses a part fails.
TEST(SplitInvariance, PluginDeclaresItsExchangeThroughAbiV2) {
  Case c = make_case(DType::bf16, 40, 3, 2);
  c.index = make_index("uniform", c.rows, c.gates, 4);
  fill_values(&c, "normal", 4);
  c.plan = make_plan("strided", c, 4);
  const Subject good = make_subject(std::string("plugin:") + GC_REPRO_PLUGIN, Device::cpu);
  ASSERT_NE(good.exchange, nullptr);
  EXPECT_TRUE(good.contract.claims_for("split_invariance", "grad_gate", DType::bf16));
  const Verdict v = check_property("split_invariance", good, c);
  EXPECT_TRUE(v.passed) << v.message;
  const Subject lossy = make_subject(std::string("plugin:") + GC_REPRO_LOSSY_PLUGIN, Device::cpu);
  const Verdict w = check_property("split_invariance", lossy, c);
  EXPECT_FALSE(w.passed);
  EXPECT_TRUE(breaks_claim(w, lossy.contract, DType::bf16)) << w.message;
}

TEST(SplitInvariance, OnePartIsVacuousAndOverlappingPartsAreNoSplit) {
  const Implementation repro = make_implementation("host-repro", Device::cpu);
  Case c = three_terms();
  c.plan = split_of("ranks", {{0, 1, 2}});
  Verdict v = check_property("split_invariance", repro, c);
  EXPECT_FALSE(v.passed);
  EXPECT_TRUE(v.vacuous) << v.message;
  c.plan = split_of("ranks", {{0, 1}, {1, 2}});
  v = check_property("split_invariance", repro, c);
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.message.find("row 1 is in parts 0 and 1"), std::string::npos) << v.message;
}

// The property is op-generic: on rmsnorm_modulate it reads dweight, dshift
// and dscale (the schema's row reductions) and finds the framework sum's
// differences there.
TEST(SplitInvariance, ReadsRmsnormModulatesReductions) {
  const OpSchema& op = rmsnorm_modulate_schema();
  const Implementation host = make_implementation("host", Device::cpu, op);
  std::set<std::string> failed;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Case c = make_case(op, DType::f32, 200, 6, 3);
    c.index = make_index("uniform", c.rows, c.gates, seed);
    fill_values(&c, "normal", seed);
    c.plan = make_plan("ranks", c, seed);
    const Verdict v = check_property("split_invariance", host, c);
    for (const auto& o : v.failed_outputs) failed.insert(o);
  }
  for (const auto& o : failed) EXPECT_TRUE(o == "dweight" || o == "dshift" || o == "dscale") << o;
  EXPECT_TRUE(failed.count("dweight")) << "dweight never differed in 20 splits";
  EXPECT_TRUE(failed.count("dscale")) << "dscale never differed in 20 splits";
}

// `bench --harness` attributes an exchange's time: each of partial, combine and
// finalize is timed as the implementation's calls (the partial and finalize
// also as buffers and copies), not left to "other".
TEST(SplitInvariance, ExchangeStepsAreTimedAsCalls) {
  const Implementation repro = make_implementation("host-repro", Device::cpu);
  Case c = make_case(DType::bf16, 40, 16, 3);
  c.index = make_index("uniform", c.rows, c.gates, 5);
  fill_values(&c, "normal", 5);
  std::vector<std::vector<uint64_t>> states(2);
  StageTimes before = thread_stage_times();
  ASSERT_TRUE(exchange_partial(repro, c, &states[0]).ok());
  StageTimes grew = thread_stage_times() - before;
  EXPECT_GT(grew[Stage::calls], 0) << "partial";
  EXPECT_GT(grew[Stage::buffers], 0) << "partial";
  EXPECT_GT(grew[Stage::copies], 0) << "partial";
  states[1] = states[0];
  std::vector<uint64_t> total;
  before = thread_stage_times();
  ASSERT_TRUE(exchange_combine(repro, c, states, &total).ok());
  EXPECT_GT((thread_stage_times() - before)[Stage::calls], 0) << "combine";
  Outputs out = outputs_for(c);
  before = thread_stage_times();
  ASSERT_TRUE(exchange_finalize(repro, c, total, &out).ok());
  grew = thread_stage_times() - before;
  EXPECT_GT(grew[Stage::calls], 0) << "finalize";
  EXPECT_GT(grew[Stage::copies], 0) << "finalize";
}

}  // namespace
}  // namespace gatecheck
