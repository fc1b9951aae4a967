// The check engine: budgets, coverage, shrinking, claimed failures versus
// findings, and reproduce strings that replay the shrunk case.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "broken_impls.h"
#include "properties/engine/check_engine.h"

namespace gatecheck::testing {
namespace {

CheckOptions small(std::vector<std::string> props, int64_t cases) {
  CheckOptions o;
  o.properties = std::move(props);
  o.seed = 42;
  o.seconds = 0;
  o.max_cases = cases;
  o.limits.max_rows = 40;
  o.limits.max_dim = 12;
  o.limits.max_gates = 12;
  o.limits.big_dims = false;
  o.max_shrink_seconds = 20;
  return o;
}

TEST(CheckEngine, HostPassesTheDefaultSetAndReportsCoverage) {
  int64_t runs = 0, ticks = 0;
  CheckOptions o = small(default_properties(), 6);
  o.before_run = [&](const Subject&, const std::string&, const Case&) { ++runs; };
  o.progress = [&](const CheckProgress&) { ++ticks; };
  const CheckReport r = run_check({make_subject("host", Device::cpu)}, o);
  ASSERT_EQ(r.results.size(), default_properties().size());
  for (const auto& pr : r.results) {
    EXPECT_TRUE(pr.passed) << pr.property << ": " << (pr.failure ? evidence_text(pr.failure->verdict) : "");
    EXPECT_EQ(pr.cases, 6) << pr.property;
    EXPECT_TRUE(pr.claimed);
  }
  EXPECT_FALSE(r.any_claimed_failure());
  EXPECT_EQ(runs, 6 * int64_t(default_properties().size()));
  EXPECT_GT(ticks, 0);
  EXPECT_FALSE(r.coverage.patterns.empty());
  EXPECT_FALSE(r.coverage.dtypes.empty());
  EXPECT_FALSE(r.coverage.sizes.empty());
  EXPECT_FALSE(r.coverage.values.empty());
  EXPECT_FALSE(r.coverage.plans.empty());
}

// A case budget counts cases, and the same ones on a busy machine as on an
// idle one: with a time budget as well (the CLI's --cases N under its default
// --seconds), the scale tier's share is still one of cases, and a draw that
// made no usable case gives its place to another. Scale cases here take 0.2 s
// more each, as on a loaded machine (the time share skipped them then, and
// the property came out inconclusive).
TEST(CheckEngine, ACaseBudgetRunsItsCasesOnASlowMachine) {
  CheckOptions o = small({"accuracy", "row_invariance", "segment_invariance"}, 8);
  o.seconds = 6;
  o.limits = GenLimits{};
  o.scale.enabled = true;
  o.scale.share = 0.25;  // 2 of each 8 cases
  int64_t scale_runs = 0;
  o.before_scale_run = [&](const Subject&, const std::string&, const ScaleCase&) {
    ++scale_runs;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  };
  const CheckReport r = run_check({make_subject("host", Device::cpu)}, o);
  EXPECT_EQ(scale_runs, 6);
  for (const auto& pr : r.results) {
    EXPECT_EQ(pr.cases, 8) << pr.property;
    EXPECT_FALSE(pr.inconclusive()) << pr.property;
  }
}

// The coverage counts the wide dims the small tier drew, by value, and the
// dim classes split at 4,096 (a run of few rows, where they are drawn).
TEST(CheckEngine, CoverageCountsWideDims) {
  CheckOptions o = small({"accuracy"}, 60);
  o.limits.max_rows = 8;
  o.limits.big_dims = true;
  int64_t wide = 0;
  o.before_run = [&](const Subject&, const std::string&, const Case& c) { wide += c.dim >= 1000; };
  const CheckReport r = run_check({make_subject("host", Device::cpu)}, o);
  ASSERT_EQ(r.results.size(), 1u);
  EXPECT_TRUE(r.results[0].passed);
  int64_t counted = 0, past = 0;
  for (const auto& [dim, n] : r.coverage.wide_dims) {
    EXPECT_GE(dim, 1000);
    counted += n;
    if (dim > 4096) past += n;
  }
  EXPECT_GT(wide, 0);
  EXPECT_EQ(counted, wide);
  const auto sized = [&](const char* k) { return r.coverage.sizes.count(k) ? r.coverage.sizes.at(k) : 0; };
  EXPECT_EQ(sized("dim 4097+"), past);
  EXPECT_EQ(sized("dim 1000-4096") + past, wide);
  EXPECT_EQ(sized("dim 1000+"), 0);
}

TEST(CheckEngine, SameSeedSameCases) {
  std::vector<std::string> a, b;
  CheckOptions o = small({"accuracy"}, 5);
  o.before_run = [&](const Subject&, const std::string&, const Case& c) { a.push_back(describe(c)); };
  run_check({make_subject("host", Device::cpu)}, o);
  o.before_run = [&](const Subject&, const std::string&, const Case& c) { b.push_back(describe(c)); };
  run_check({make_subject("host", Device::cpu)}, o);
  EXPECT_EQ(a, b);
}

// A shrink with no time left reports the case as found and says it was cut
// short, so that the report does not call it minimal.
TEST(CheckEngine, AShrinkOutOfTimeSaysItWasCutShort) {
  CheckOptions o = small({"row_invariance"}, 50);
  o.max_shrink_seconds = 0;
  const CheckReport r = run_check({broken(Bug::odd_batch_flip)}, o);
  ASSERT_EQ(r.results.size(), 1u);
  ASSERT_TRUE(r.results[0].failure.has_value());
  const FailureReport& f = *r.results[0].failure;
  EXPECT_TRUE(f.shrink_cut_short);
  EXPECT_EQ(f.shrink_steps, 0);
  EXPECT_EQ(describe(f.shrunk), describe(f.original));
  EXPECT_FALSE(f.verdict.passed);
}

TEST(CheckEngine, ShrinksAClaimedFailureAndReproducesIt) {
  const Subject bad = broken(Bug::odd_batch_flip);
  const CheckReport r = run_check({bad}, small({"row_invariance"}, 50));
  ASSERT_EQ(r.results.size(), 1u);
  const auto& pr = r.results[0];
  ASSERT_TRUE(pr.failure.has_value());
  EXPECT_FALSE(pr.passed);
  EXPECT_TRUE(pr.failure->claimed);
  EXPECT_TRUE(r.any_claimed_failure());
  EXPECT_FALSE(pr.failure->verdict.passed);
  EXPECT_LE(pr.failure->shrunk.rows, pr.failure->original.rows);
  EXPECT_LE(pr.failure->shrunk.rows, 4) << describe(pr.failure->shrunk);
  EXPECT_GT(pr.failure->shrink_steps, 0);
  EXPECT_FALSE(pr.failure->shrink_cut_short) << "it ran to a case none of whose shrinks fails";
  EXPECT_GE(pr.failure->seconds_to_find, 0);
  ASSERT_FALSE(pr.failure->reproduce.empty());

  CheckOptions again = small({"row_invariance"}, 50);
  again.reproduce = pr.failure->reproduce;
  const CheckReport rr = run_check({bad}, again);
  ASSERT_EQ(rr.results.size(), 1u);
  ASSERT_TRUE(rr.results[0].failure.has_value());
  EXPECT_EQ(rr.results[0].cases, 1);
  EXPECT_TRUE(rr.results[0].failure->shrunk == pr.failure->shrunk);
  EXPECT_TRUE(rr.results[0].failure->claimed);
  // The same string does not name the host implementation.
  EXPECT_THROW(run_check({make_subject("host", Device::cpu)}, again), std::invalid_argument);
  again.reproduce = "not-a-reproduce-string";
  EXPECT_THROW(run_check({bad}, again), std::invalid_argument);
}

TEST(CheckEngine, AnUnclaimedFailureIsAFindingAndTheSearchGoesOn) {
  Subject bad = broken(Bug::out_off_by_much);
  bad.contract.exceptions.push_back({"accuracy:out", {}, "planted: out is not claimed"});
  const CheckReport r = run_check({bad}, small({"accuracy"}, 15));
  ASSERT_EQ(r.results.size(), 1u);
  const auto& pr = r.results[0];
  ASSERT_TRUE(pr.failure.has_value());
  EXPECT_FALSE(pr.failure->claimed);
  EXPECT_FALSE(pr.passed);
  EXPECT_FALSE(r.any_claimed_failure());
  EXPECT_EQ(pr.cases, 15);  // it kept looking for a claimed failure
  EXPECT_EQ(pr.failure->verdict.failed_outputs, std::vector<std::string>{"out"});
}

TEST(CheckEngine, EveryPropertyCatchesItsPlantedBug) {
  const std::pair<const char*, Bug> plan[] = {
      {"accuracy", Bug::out_off_by_much},           {"row_invariance", Bug::odd_batch_flip},
      {"segment_invariance", Bug::small_batch_grad_gate}, {"repeatable", Bug::flaky_grad_gate},
      {"inputs_untouched", Bug::writes_y},          {"full_write", Bug::skips_last_grad_y},
      {"no_oob_write", Bug::writes_past_out},       {"error_inputs", Bug::accepts_bad_index},
      {"eager_exact", Bug::fused_forward}};
  for (const auto& [prop, bug] : plan) {
    const Subject bad = broken(bug);
    const CheckReport r = run_check({bad}, small({prop}, 60));
    ASSERT_TRUE(r.results.at(0).failure.has_value()) << prop << " missed " << bug_name(bug);
    EXPECT_TRUE(r.results[0].failure->claimed) << prop;
  }
}

// Shrinking is off the time budget: a long shrink on one property must not
// leave the next a single case, reported as passing.
TEST(CheckEngine, ShrinkingTakesNoShareOfTheNextPropertysBudget) {
  const Subject bad = broken(Bug::odd_batch_flip);  // fails row_invariance, keeps inputs_untouched
  CheckOptions o = small({"row_invariance", "inputs_untouched"}, 0);
  o.seconds = 2;
  o.max_shrink_seconds = 30;
  int64_t runs = 0;
  o.before_run = [&](const Subject&, const std::string& p, const Case&) { runs += p == "row_invariance"; };
  // A first run counts row_invariance's calls: the cases until it fails, then the shrink's.
  const CheckReport first = run_check({bad}, o);
  ASSERT_TRUE(first.results.at(0).failure.has_value());
  const int64_t found_at = first.results[0].cases, shrink_runs = runs - found_at;
  ASSERT_GT(shrink_runs, 0);
  // The same run (seed 42, one worker: the same cases), each shrink step made
  // slow enough that the shrink takes 3 s, longer than the whole budget.
  const auto step = std::chrono::microseconds(3000000 / shrink_runs + 1);
  runs = 0;
  o.before_run = [&](const Subject&, const std::string& p, const Case&) {
    if (p == "row_invariance" && ++runs > found_at) std::this_thread::sleep_for(step);
  };
  const CheckReport r = run_check({bad}, o);
  ASSERT_EQ(r.results.size(), 2u);
  ASSERT_TRUE(r.results[0].failure.has_value());
  EXPECT_EQ(r.results[0].cases, found_at);
  EXPECT_GE(r.results[0].seconds, 3.0);
  // inputs_untouched still gets what row_invariance's cases left of the 2 s.
  EXPECT_GE(r.results[1].seconds, 1.0) << r.results[1].cases << " cases";
  EXPECT_GT(r.results[1].cases, 1);
  EXPECT_TRUE(r.results[1].passed);
}

TEST(CheckEngine, RejectsUnknownProperties) {
  EXPECT_THROW(run_check({make_subject("host", Device::cpu)}, small({"nope"}, 1)), std::invalid_argument);
}

}  // namespace
}  // namespace gatecheck::testing

#include <sstream>

#include "properties/engine/harness_bench.h"

namespace gatecheck::testing {
namespace {

TEST(HarnessBench, ReportsCasesPerSecondPerProperty) {
  HarnessBenchOptions o;
  o.properties = {"accuracy", "row_invariance"};
  o.seconds_per_property = 0.05;
  o.limits.max_rows = 20;
  o.limits.max_dim = 8;
  std::ostringstream out;
  EXPECT_EQ(run_harness_bench({}, o, out), 0);
  const std::string text = out.str();
  EXPECT_NE(text.find("cases/s"), std::string::npos) << text;
  EXPECT_NE(text.find("host@cpu"), std::string::npos) << text;
  EXPECT_NE(text.find("row_invariance"), std::string::npos) << text;
  EXPECT_NE(text.find("where a case's time goes"), std::string::npos) << text;
  o.jobs = 2;
  const auto rows = harness_bench({make_subject("host", Device::cpu)}, o);
  ASSERT_EQ(rows.size(), 4u);  // each property at --jobs 1, then at --jobs 2
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].jobs, i % 2 ? 2 : 1);
    EXPECT_GT(rows[i].cases, 0);
    EXPECT_GT(rows[i].cases_per_second, 0);
    EXPECT_GT(rows[i].stages[Stage::generate], 0);
    EXPECT_GT(rows[i].stages[Stage::calls], 0);
  }
  o.jobs = 1;  // measured once, not twice
  const auto one = harness_bench({make_subject("host", Device::cpu)}, o);
  ASSERT_EQ(one.size(), 2u);
  EXPECT_EQ(one[0].jobs, 1);
  EXPECT_EQ(one[1].property, "row_invariance");
  std::ostringstream single;
  EXPECT_EQ(run_harness_bench({}, o, single), 0);
  EXPECT_EQ(single.str().find("beside"), std::string::npos) << single.str();
  EXPECT_NE(single.str().find("mean over the properties"), std::string::npos) << single.str();
  o.properties = {"nope"};
  EXPECT_EQ(run_harness_bench({}, o, out), 2);
}

// Two implementations compared: property by property, one after the other,
// and with cases_per_property on the same cases.
TEST(HarnessBench, ComparesImplementationsPropertyByPropertyOnTheSameCases) {
  HarnessBenchOptions o;
  o.properties = {"accuracy", "inputs_untouched"};
  o.cases_per_property = 5;
  o.jobs = 1;
  o.limits.max_rows = 20;
  o.limits.max_dim = 8;
  std::vector<std::pair<std::string, Case>> seen;  // property, case: every run, warm-up included
  o.before_run = [&](const Subject&, const std::string& property, const Case& c) { seen.emplace_back(property, c); };
  const Subject host = make_subject("host", Device::cpu);
  const auto rows = harness_bench({host, host}, o);
  ASSERT_EQ(rows.size(), 4u);
  for (const auto& r : rows) EXPECT_EQ(r.cases, 5) << r.property;
  EXPECT_EQ(rows[0].property, "accuracy");  // listed by implementation
  EXPECT_EQ(rows[1].property, "inputs_untouched");
  int changes = 0;
  for (size_t i = 1; i < seen.size(); ++i) changes += seen[i].first != seen[i - 1].first;
  EXPECT_EQ(changes, 1);  // both implementations' accuracy, then both's inputs_untouched
  const size_t half = seen.size() / 4;  // each implementation x property: the same count of runs
  ASSERT_EQ(seen.size(), 4 * half);
  ASSERT_GE(half, 6u);  // a warm-up case, then the five
  for (size_t k = 0; k < half; ++k) EXPECT_TRUE(seen[k].second == seen[half + k].second) << "run " << k;
}

}  // namespace
}  // namespace gatecheck::testing

#include <cstdlib>

namespace gatecheck::testing {
namespace {

// RC_PARAMS is read once per process, so this runs in a fresh one (a
// "threadsafe" death test re-executes the binary for just this test).
TEST(CheckEngineDeathTest, TakesTheReproduceStringFromRcParams) {
  const Subject bad = broken(Bug::odd_batch_flip);
  CheckOptions o;
  o.properties = {"row_invariance"};
  o.seed = 42;
  o.seconds = 0;
  o.max_cases = 50;
  o.limits.max_rows = 40;
  o.limits.max_dim = 12;
  o.limits.max_gates = 12;
  o.limits.big_dims = false;
  o.max_shrink_seconds = 20;
  const CheckReport first = run_check({bad}, o);
  ASSERT_TRUE(first.results.at(0).failure.has_value());
  const Case want = first.results[0].failure->shrunk;
  const std::string params = "reproduce=" + first.results[0].failure->reproduce;
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("RC_PARAMS", params.c_str(), 1);
        const CheckReport r = run_check({bad}, o);
        const bool same = r.results.size() == 1 && r.results[0].cases == 1 && r.results[0].failure &&
                          r.results[0].failure->shrunk == want;
        std::exit(same ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace gatecheck::testing
