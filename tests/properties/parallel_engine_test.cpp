// check --jobs: any number of workers draws the cases a serial loop draws
// (case k of a property from the seed, the property and k alone), and with a
// case budget gives the same counts, coverage, failures, shrunk cases and
// reproduce strings as one worker: on passing runs, on claimed failures (the
// count stops at the failing case), on unclaimed findings (torch-eager), with
// implementations behind the plugin lock and with thread-safe ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>

#include "broken_impls.h"
#include "case/case_json.h"
#include "case/fnv1a.h"
#include "properties/engine/case_slots.h"
#include "properties/engine/check_engine.h"

namespace gatecheck::testing {
namespace {

CheckOptions opts(std::vector<std::string> props, int64_t cases, int jobs) {
  CheckOptions o;
  o.properties = std::move(props);
  o.seed = 1234;
  o.seconds = 0;
  o.max_cases = cases;
  o.limits.max_rows = 60;
  o.limits.max_dim = 20;
  o.limits.max_gates = 12;
  o.limits.big_dims = false;
  o.max_shrink_seconds = 20;
  o.jobs = jobs;
  return o;
}

// Every case a run's implementations were given, property by property.
std::map<std::string, std::vector<std::string>> drawn(const std::vector<Subject>& impls, CheckOptions o) {
  std::map<std::string, std::vector<std::string>> seen;
  std::mutex m;
  o.before_run = [&](const Subject& s, const std::string& p, const Case& c) {
    const std::lock_guard<std::mutex> lock(m);
    seen[s.label() + "/" + p].push_back(case_digest(c));
  };
  o.max_shrink_seconds = 0;
  run_check(impls, o);
  return seen;
}

TEST(ParallelEngine, AnyJobsDrawsTheCasesOfASerialLoop) {
  const std::vector<std::string> props = {"accuracy", "row_invariance", "segment_invariance", "error_inputs"};
  const CheckOptions o = opts(props, 30, 1);
  const auto one = drawn({make_subject("host", Device::cpu)}, o);
  CheckOptions o4 = o;
  o4.jobs = 4;
  const auto four = drawn({make_subject("host", Device::cpu)}, o4);
  for (const auto& p : props) {
    // The serial loop, spelled out: the k-th split of the property's stream, at size case_size(k).
    std::vector<std::string> want;
    rc::Random stream(o.seed ^ fnv1a(p));
    const auto gen = gen_case_for(p, o.limits);
    for (int64_t k = 0; k < 30; ++k) {
      const rc::Random r = stream.split();
      try {
        want.push_back(case_digest(gen(r, case_size(k)).value()));
      } catch (const rc::GenerationFailure&) {
      }
    }
    const std::string key = "host@cpu/" + p;
    ASSERT_FALSE(want.empty()) << p;
    EXPECT_EQ(one.at(key), want) << p << ": one worker, in order";
    std::vector<std::string> got = four.at(key), sorted_want = want;
    std::sort(got.begin(), got.end());
    std::sort(sorted_want.begin(), sorted_want.end());
    EXPECT_EQ(got, sorted_want) << p << ": four workers, in any order";
  }
}

void expect_same_report(const CheckReport& a, const CheckReport& b) {
  ASSERT_EQ(a.results.size(), b.results.size());
  for (size_t i = 0; i < a.results.size(); ++i) {
    const PropertyResult &x = a.results[i], &y = b.results[i];
    SCOPED_TRACE(x.impl + " " + x.property);
    EXPECT_EQ(x.cases, y.cases);
    EXPECT_EQ(x.passed, y.passed);
    EXPECT_EQ(x.claimed, y.claimed);
    ASSERT_EQ(bool(x.failure), bool(y.failure));
    if (!x.failure) continue;
    EXPECT_EQ(x.failure->claimed, y.failure->claimed);
    EXPECT_TRUE(x.failure->original == y.failure->original) << describe(x.failure->original) << " vs "
                                                            << describe(y.failure->original);
    EXPECT_TRUE(x.failure->shrunk == y.failure->shrunk);
    EXPECT_EQ(x.failure->reproduce, y.failure->reproduce);
    EXPECT_EQ(x.failure->shrink_steps, y.failure->shrink_steps);
    EXPECT_EQ(x.failure->verdict.message, y.failure->verdict.message);
  }
  EXPECT_EQ(a.coverage.patterns, b.coverage.patterns);
  EXPECT_EQ(a.coverage.dtypes, b.coverage.dtypes);
  EXPECT_EQ(a.coverage.sizes, b.coverage.sizes);
  EXPECT_EQ(a.coverage.values, b.coverage.values);
  EXPECT_EQ(a.coverage.plans, b.coverage.plans);
}

TEST(ParallelEngine, OneAndFourJobsGiveTheSameResultsOnHost) {
  const std::vector<Subject> impls = {make_subject("host", Device::cpu)};
  const CheckReport one = run_check(impls, opts(default_properties(), 25, 1));
  const CheckReport four = run_check(impls, opts(default_properties(), 25, 4));
  EXPECT_EQ(four.jobs, 4);
  expect_same_report(one, four);
  for (const auto& r : four.results) {
    EXPECT_TRUE(r.passed) << r.property;
    EXPECT_GT(r.stages.total(), 0) << r.property << ": no stage timed";
    EXPECT_GE(r.worker_seconds * 1.001, r.stages.total()) << r.property;
  }
}

TEST(ParallelEngine, OneAndFourJobsGiveTheSameFailures) {
  // Broken implementations (in process, so behind the plugin lock), each
  // failing the property aimed at its bug: the count stops at the same
  // failing case, shrunk to the same case, with the same reproduce string.
  const std::vector<std::pair<Bug, std::string>> bugs = {
      {Bug::out_off_by_much, "accuracy"},         {Bug::odd_batch_flip, "row_invariance"},
      {Bug::small_batch_grad_gate, "segment_invariance"}, {Bug::writes_y, "inputs_untouched"},
      {Bug::skips_last_grad_y, "full_write"},      {Bug::writes_past_out, "no_oob_write"},
      {Bug::accepts_bad_index, "error_inputs"}};
  for (const auto& [bug, property] : bugs) {
    SCOPED_TRACE(bug_name(bug));
    const std::vector<Subject> impls = {broken(bug)};
    const CheckReport one = run_check(impls, opts({property, "accuracy"}, 40, 1));
    const CheckReport four = run_check(impls, opts({property, "accuracy"}, 40, 4));
    ASSERT_TRUE(one.results[0].failure && one.results[0].failure->claimed) << "the bug was not found: this proves nothing";
    EXPECT_LT(one.results[0].cases, 40) << "a claimed failure stops the count at its case";
    expect_same_report(one, four);
  }
}

TEST(ParallelEngine, OneAndFourJobsGiveTheSameFindingsOnTorchEager) {
  Subject torch;
  try {
    torch = make_subject("torch-eager", Device::cpu);
  } catch (const std::exception& e) {
    GTEST_SKIP() << "no torch-eager here: " << e.what();
  }
  // accuracy's findings on bf16/f16 grad_gate are unclaimed: the first one is kept, the run goes on.
  const std::vector<std::string> props = {"accuracy", "row_invariance", "repeatable"};
  const CheckReport one = run_check({torch}, opts(props, 40, 1));
  const CheckReport four = run_check({torch}, opts(props, 40, 4));
  ASSERT_TRUE(one.results[0].failure && !one.results[0].failure->claimed)
      << "torch-eager's accuracy finding was not found: this proves nothing";
  EXPECT_EQ(one.results[0].cases, 40) << "an unclaimed finding does not stop the count";
  expect_same_report(one, four);
}

}  // namespace
}  // namespace gatecheck::testing

namespace gatecheck::testing {
namespace {

// A time budget that is already spent (a slow machine, a long pair before)
// still runs one case of each pair, and no more.
TEST(ParallelEngine, ASpentTimeBudgetRunsOneCaseAPair) {
  CheckOptions o = opts(default_properties(), 0, 4);
  o.seconds = 1e-9;
  std::atomic<int64_t> runs{0};
  o.before_run = [&](const Subject&, const std::string&, const Case&) { ++runs; };
  o.stop_requested = [&] { return runs.load() > 500; };  // rather than run on for ever
  const CheckReport r = run_check({make_subject("host", Device::cpu)}, o);
  EXPECT_FALSE(r.interrupted) << "the budget did not stop the run";
  for (const auto& p : r.results) EXPECT_LE(p.cases, 1) << p.property;
}

}  // namespace
}  // namespace gatecheck::testing
