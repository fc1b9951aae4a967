// The scale tier's ladder, share rule and engine hook (properties/scale_tier.h,
// scale_check.h): what the draws reach on the CPU and on a GPU's limits, that
// they are deterministic and fit, and that a run gives the tier its share,
// reports it, catches a bug only scale shows, and leaves the small tier as it was.
#include <gtest/gtest.h>

#include "kernels/rmsnorm_modulate.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <optional>
#include <set>
#include <thread>

#include "case/case_spec.h"
#include "case/plan_movement.h"
#include "properties/engine/check_engine.h"
#include "properties/engine/device_gate.h"
#include "properties/generate/generators.h"
#include "properties/engine/scale_check.h"

namespace gatecheck {
namespace {

ScaleLimits cpu_limits() {
  ScaleLimits l;
  l.device = Device::cpu;
  l.max_elements = int64_t(1) << 22;
  l.memory_bytes = uint64_t(2) << 30;
  l.past_2_31_note = "not on the CPU";
  return l;
}

ScaleLimits h200_limits() {  // what an idle H200 gives: 60% of about 139 GB free
  ScaleLimits l;
  l.device = Device::cuda;
  l.max_elements = int64_t(1) << 34;
  l.memory_bytes = uint64_t(83) << 30;
  return l;
}

struct Reach {
  int64_t max_rows = 0, max_segment = 0, max_elements = 0, past_grid = 0, past_2_31 = 0, cases = 0;
  std::set<std::string> patterns, plans, rungs, values;
  std::set<int64_t> dims;
};

Reach reach(const ScaleLimits& l, int per_property) {
  Reach r;
  for (const auto& p : default_properties()) {
    if (!has_scale_version(p)) continue;
    for (int j = 0; j < per_property; ++j) {
      const ScaleSpec s = draw_scale_case(42, p, j, l);
      EXPECT_EQ(draw_scale_case(42, p, j, l), s);  // deterministic
      const ScaleCase c = make_scale_case(s);
      EXPECT_LE(c.elements(), l.max_elements) << describe(c);
      EXPECT_LE(scale_case_bytes(c.dtype, c.rows, c.dim, c.gates, scale_output_sets(p)), l.memory_bytes) << describe(c);
      EXPECT_EQ(exact_values_problem(c), "") << describe(c);
      EXPECT_TRUE(plan_moves_rows(p, c.shadow())) << p << ": " << describe(c);
      if (p == "repeatable" || p == "row_invariance" || p == "segment_invariance") {
        EXPECT_NE(s.values, ScaleValues::exact) << "order bugs need sums that round";
      }
      ++r.cases;
      r.max_rows = std::max(r.max_rows, c.rows);
      r.max_segment = std::max(r.max_segment, longest_segment(c.index, c.gates));
      r.max_elements = std::max(r.max_elements, c.elements());
      r.past_grid += c.rows > 65535;
      r.past_2_31 += c.elements() > (int64_t(1) << 31) - 1;
      r.patterns.insert(s.index_pattern);
      r.plans.insert(s.plan_kind);
      r.rungs.insert(s.rung);
      r.values.insert(scale_values_name(s.values));
      r.dims.insert(c.dim);
    }
  }
  return r;
}

TEST(ScaleTier, CpuDrawsReachTheGridEdgesWithSmallDims) {
  const Reach r = reach(cpu_limits(), 40);
  EXPECT_GT(r.max_rows, 65536);
  EXPECT_GE(r.max_segment, 4096);
  EXPECT_EQ(r.past_2_31, 0);
  EXPECT_GT(r.past_grid, r.cases / 5);
  std::set<std::string> all(all_index_patterns().begin(), all_index_patterns().end());
  all.insert("long_segment");
  EXPECT_EQ(r.patterns, all);
  EXPECT_EQ(r.plans, std::set<std::string>(all_plan_kinds().begin(), all_plan_kinds().end()));
  EXPECT_EQ(r.values, (std::set<std::string>{"exact", "rounding", "cancelling"}));
  EXPECT_TRUE(r.rungs.count("model dims"));
  // small dims but for the model-dims rung, whose wide dims pass 4,096 and
  // are not all multiples of 8
  bool past = false, odd_past = false;
  for (int64_t d : r.dims) {
    if (d > 17) {
      EXPECT_GE(d, 3071);
    }
    past = past || d > 4096;
    odd_past = odd_past || (d > 4096 && d % 8);
  }
  EXPECT_TRUE(past);
  EXPECT_TRUE(odd_past);
}

// On the CPU every property's second scale case is wide rows: a few rows of
// a dim past a tile's width, at most 2^20 elements, so that even a short
// check draws one per property. This fails if the CPU tier stops drawing them.
TEST(ScaleTier, CpuOpensWithWideRowsForEveryProperty) {
  const ScaleLimits l = cpu_limits();
  int past = 0, odd_past = 0, n = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed)
    for (const auto& p : default_properties()) {
      if (!has_scale_version(p)) continue;
      const ScaleSpec s = draw_scale_case(seed, p, 1, l);
      ++n;
      EXPECT_EQ(s.rung, "model dims") << p;
      EXPECT_GE(s.dim, 3071) << p;
      EXPECT_GE(s.rows, 2) << p;
      EXPECT_LE(s.rows * s.dim, int64_t(1) << 20) << p;
      past += s.dim > 4096;
      odd_past += s.dim > 4096 && s.dim % 8 != 0;
    }
  EXPECT_GT(past, n / 2);
  EXPECT_GT(odd_past, n / 4);
}

// The GPU ladder, without a GPU: draws are decided by the limits alone
// (building each index is the expensive part, so fewer draws).
TEST(ScaleTier, GpuDrawsReachPast2To31AndModelDims) {
  const Reach r = reach(h200_limits(), 12);
  EXPECT_GT(r.past_2_31, 0);
  EXPECT_GE(r.max_segment, 16384);
  EXPECT_TRUE(r.rungs.count("model dims") && r.rungs.count("elements at 65,535 x 256") && r.rungs.count("many gates"));
  bool model = false;
  for (int64_t d : r.dims) model = model || d == 3072 || d == 5376 || d == 8192 || d == 8191 || d == 3073;
  EXPECT_TRUE(model);
}

TEST(ScaleTier, NoPast2To31WhereMemoryIsShort) {
  ScaleLimits l = h200_limits();
  l.memory_bytes = uint64_t(20) << 30;
  l.past_2_31_note = "needs 25 GiB";
  for (int j = 0; j < 30; ++j) {
    const ScaleSpec s = draw_scale_case(7, "accuracy", j, l);
    EXPECT_LE(s.rows * s.dim, (int64_t(1) << 31) - 1) << j;
    EXPECT_LE(scale_case_bytes(s.dtype, s.rows, s.dim, s.gates, 1), l.memory_bytes);
  }
}

TEST(ScaleTier, ShareRules) {
  ScaleShare by_cases(0.25, false);
  int scale = 0;
  for (int64_t n = 0; n < 40; ++n)
    if (by_cases.due(0, n)) by_cases.ran(1), ++scale;
  EXPECT_EQ(scale, 10);
  ScaleShare by_time(0.25, true);
  EXPECT_FALSE(by_time.due(0, 0));  // nothing spent yet
  EXPECT_TRUE(by_time.due(1.0, 1));
  by_time.ran(0.5);
  EXPECT_FALSE(by_time.due(1.5, 2));  // 0.5 s of 1.5 s is past a quarter
  EXPECT_TRUE(by_time.due(2.5, 3));
  ScaleShare off(0, true);
  EXPECT_FALSE(off.due(100, 100));
  ScaleOptions o;
  EXPECT_EQ(scale_share_for(o, Device::cuda), 0);  // off unless enabled
  o.enabled = true;
  EXPECT_EQ(scale_share_for(o, Device::cuda), kDefaultScaleShareCuda);
  EXPECT_EQ(scale_share_for(o, Device::cpu), kDefaultScaleShareCpu);
  o.share = 0.5;
  EXPECT_EQ(scale_share_for(o, Device::cpu), 0.5);
}

CheckOptions small_run(const std::vector<std::string>& props, int64_t cases) {
  CheckOptions o;
  o.properties = props;
  o.seed = 5;
  o.seconds = 0;
  o.max_cases = cases;
  o.limits.max_rows = 64;
  o.limits.max_dim = 8;
  o.limits.big_dims = false;
  return o;
}

TEST(ScaleEngine, TheTierGetsItsShareAndTheSmallTierIsUnchanged) {
  const std::vector<Subject> host = {make_subject("host", Device::cpu)};
  CheckOptions off = small_run({"accuracy", "repeatable"}, 12);
  CheckOptions on = off;
  on.scale.enabled = true;
  on.scale.share = 0.25;
  const CheckReport a = run_check(host, off), b = run_check(host, on);
  ASSERT_EQ(b.results.size(), 2u);
  for (const auto& r : b.results) {
    EXPECT_TRUE(r.passed) << r.property;
    EXPECT_EQ(r.cases, 12);
  }
  EXPECT_EQ(b.coverage.scale.cases, 6);  // 3 of each 12
  EXPECT_EQ(a.coverage.scale.cases, 0);
  EXPECT_GT(b.coverage.scale.max_rows, 1000);
  EXPECT_EQ(b.coverage.scale.shares.at("cpu"), 0.25);
  // the small cases are the first 9 of the same stream: the same as a 9-case run without the tier
  CheckOptions nine = off;
  nine.max_cases = 9;
  const CheckReport c = run_check(host, nine);
  EXPECT_EQ(c.coverage.sizes, b.coverage.sizes);
  EXPECT_EQ(c.coverage.patterns, b.coverage.patterns);
  // a share of 1: every case at scale; 0: none
  CheckOptions all = small_run({"accuracy"}, 4);
  all.scale.enabled = true;
  all.scale.share = 1;
  const CheckReport d = run_check(host, all);
  EXPECT_EQ(d.results[0].cases, 4);
  EXPECT_EQ(d.coverage.scale.cases, 4);
  all.scale.share = 0;
  EXPECT_EQ(run_check(host, all).coverage.scale.cases, 0);
}

// Where a scale case runs alone (always on a GPU: properties/engine/device_gate.h;
// here the CPU's gate, asked for), no small case runs beside it: those under way
// finish first, and the next wait. Without the gate, small cases run beside it.
// A small case gives the device back before its comparisons, so with the gate
// its device work is read off the gate itself; without it, a case is from
// before_run to after_run.
TEST(ScaleEngine, AScaleCaseRunsAloneWhereAsked) {
  const std::vector<Subject> host = {make_subject("host", Device::cpu)};
  const DeviceGate* gate = device_gate(Device::cpu, true);
  for (bool alone : {true, false}) {
    SCOPED_TRACE(alone ? "alone" : "shared");
    CheckOptions o = small_run({"row_invariance"}, 24);
    o.scale.enabled = true;
    o.scale.share = 0.25;
    o.scale.alone_on_cpu = alone;
    o.jobs = 4;
    std::atomic<int> small{0}, scale{0}, beside{0}, scale_cases{0};
    static thread_local bool in_scale = false;  // this worker's case is a scale case
    auto scale_running = [&] { return alone ? gate->scale_case_running() : scale.load() > 0; };
    auto small_running = [&] { return alone ? gate->small_cases_running() > 0 : small.load() > 0; };
    o.before_run = [&](const Subject&, const std::string&, const Case&) {
      ++small;
      if (scale_running()) ++beside;
      std::this_thread::sleep_for(std::chrono::milliseconds(30));  // under way when a scale case asks
    };
    o.before_scale_run = [&](const Subject&, const std::string&, const ScaleCase&) {
      in_scale = true;
      ++scale;
      ++scale_cases;
      if (small_running()) ++beside;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));  // time for the other workers to start cases
      if (small_running()) ++beside;
    };
    o.after_run = [&] {
      if (in_scale) --scale;
      else --small;
      in_scale = false;
    };
    const CheckReport r = run_check(host, o);
    ASSERT_EQ(r.results.size(), 1u);
    EXPECT_TRUE(r.results[0].passed);
    EXPECT_EQ(scale_cases.load(), 6);
    if (alone) {
      EXPECT_EQ(beside.load(), 0) << "a small case ran beside a scale case";
    } else {
      EXPECT_GT(beside.load(), 0) << "no small case ran beside a scale case: the test shows nothing";
    }
    // Each scale case's record says how long it waited for the small cases under way.
    double waited = 0;
    for (const auto& x : r.results[0].scale_runs) {
      EXPECT_LE(x.waited, x.seconds);
      waited = std::max(waited, x.waited);
    }
    if (alone) {
      EXPECT_GE(waited, 0.01) << "no scale case waited for a small case under way";
    } else {
      EXPECT_EQ(waited, 0.0);
    }
  }
}

// A small case holds the device for its run, not for its drawing: while a
// scale case has the device, the other workers draw their next cases (host
// work) and wait with them. Held from before the drawing, no drawing would
// end while a scale case has the device: the scale case would wait for it.
TEST(ScaleEngine, SmallCasesAreDrawnWhileAScaleCaseHasTheDevice) {
  const std::vector<Subject> host = {make_subject("host", Device::cpu)};
  CheckOptions o = small_run({"accuracy"}, 24);
  o.scale.enabled = true;
  o.scale.share = 0.25;
  o.scale.alone_on_cpu = true;
  o.jobs = 4;
  std::atomic<int> scale{0}, drawn_beside{0}, run_beside{0};
  static thread_local bool in_scale = false;
  o.after_generate = [&] {  // a drawing that takes a while: a scale case that asks meanwhile gets the device
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    drawn_beside += scale.load() > 0;
  };
  o.before_run = [&](const Subject&, const std::string&, const Case&) { run_beside += scale.load() > 0; };
  o.before_scale_run = [&](const Subject&, const std::string&, const ScaleCase&) {
    in_scale = true;
    ++scale;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // time for the others to draw
  };
  o.after_run = [&] {
    if (in_scale) --scale;
    in_scale = false;
  };
  const CheckReport r = run_check(host, o);
  ASSERT_EQ(r.results.size(), 1u);
  EXPECT_TRUE(r.results[0].passed);
  EXPECT_EQ(r.coverage.scale.cases, 6);
  EXPECT_GT(drawn_beside.load(), 0) << "no small case was drawn while a scale case had the device";
  EXPECT_EQ(run_beside.load(), 0) << "a small case ran beside a scale case";
}

// A small case gives its device hold back once its property's calls are over
// (PropertyOptions::device_done): accuracy before its oracle, full_write,
// row_invariance, segment_invariance and repeatable before their comparisons.
// Each held it before its property ran: the count sees a hold. One worker, so
// that the gate counts this case alone.
TEST(ScaleEngine, APropertyGivesTheDeviceBackOnceItsCallsAreOver) {
  const std::vector<Subject> host = {make_subject("host", Device::cpu)};
  const DeviceGate* gate = device_gate(Device::cpu, true);
  for (const char* property : {"accuracy", "full_write", "row_invariance", "segment_invariance", "repeatable"}) {
    SCOPED_TRACE(property);
    CheckOptions o = small_run({property}, 8);
    o.scale.enabled = true;
    o.scale.share = 0.25;
    o.scale.alone_on_cpu = true;
    o.jobs = 1;
    int small = 0, held_before = 0, held_at_end = 0;
    static thread_local bool in_scale = false;
    o.before_scale_run = [&](const Subject&, const std::string&, const ScaleCase&) { in_scale = true; };
    o.before_run = [&](const Subject&, const std::string&, const Case&) {  // a small case's, its hold taken
      held_before += gate->small_cases_running();
    };
    o.after_run = [&] {  // still inside the case's check, before the engine's own release
      if (!in_scale) {
        ++small;
        held_at_end += gate->small_cases_running();
      }
      in_scale = false;
    };
    const CheckReport r = run_check(host, o);
    ASSERT_EQ(r.results.size(), 1u);
    EXPECT_TRUE(r.results[0].passed);
    ASSERT_GT(small, 0);
    EXPECT_EQ(held_before, small) << "small cases that held the device as their property began";
    EXPECT_EQ(held_at_end, 0) << "small cases that still held the device at their end";
  }
}

// A scale case that waits for the device (the small cases under way finish
// first) spends its share waiting, so a draw fits only with the wait expected
// beside its estimate: the mean of the waits before it. Here the first small
// cases take a second each, so the early scale cases wait for them, and later
// draws that would fit without that wait are skipped.
TEST(ScaleEngine, ADrawFitsOnlyWithTheWaitExpected) {
  const std::vector<Subject> host = {make_subject("host", Device::cpu)};
  CheckOptions o = small_run({"accuracy"}, 0);
  o.seconds = 6;
  o.max_cases = 0;
  o.jobs = 3;
  o.scale.enabled = true;
  o.scale.share = 0.2;
  o.scale.alone_on_cpu = true;
  std::atomic<int> small{0};
  o.before_run = [&](const Subject&, const std::string&, const Case&) {  // the first ones slow: long waits early
    std::this_thread::sleep_for(std::chrono::milliseconds(++small <= 6 ? 1000 : 1));
  };
  const CheckReport r = run_check(host, o);
  ASSERT_EQ(r.results.size(), 1u);
  const auto& runs = r.results[0].scale_runs;
  ASSERT_GE(runs.size(), 2u);
  double waited = 0, expected_max = 0;
  for (size_t k = 0; k < runs.size(); ++k) {
    if (runs[k].allowance >= 0 && k > 0) {
      EXPECT_NEAR(runs[k].expected_wait, waited / double(k), 1e-9) << "case " << k << " expected another wait";
    }
    expected_max = std::max(expected_max, runs[k].expected_wait);
    waited += runs[k].waited;
  }
  int by_wait = 0;  // draws the wait alone kept out
  for (const ScaleSkipRecord& k : r.results[0].scale_skipped) {
    expected_max = std::max(expected_max, k.expected_wait);
    if (k.why.rfind("estimated", 0) != 0) continue;
    EXPECT_GT(k.estimate + k.expected_wait, k.left) << k.shape;
    by_wait += k.estimate <= k.left;
  }
  std::printf("%zu scale cases, the wait expected up to %.3f s; %d draws skipped for their wait\n", runs.size(),
              expected_max, by_wait);
  EXPECT_GT(expected_max, 0.01) << "no draw expected a wait: the test shows nothing";
  EXPECT_GT(by_wait, 0) << "no draw was kept out by its wait alone";
}

// An implementation's first scale case pays one-time costs (on a GPU, 0.8 s
// for a case whose like took 0.02 s after it), so the cost model does not
// learn from it: the next case probes again, estimated by the prior, and the
// one after that by what the second measured.
TEST(ScaleEngine, TheFirstScaleCaseIsAWarmUpAndTheNextProbesAgain) {
  const std::vector<Subject> host = {make_subject("host", Device::cpu)};
  CheckOptions o = small_run({"accuracy"}, 0);
  o.seconds = 6;
  o.max_cases = 0;
  o.scale.enabled = true;
  o.scale.share = 0.5;
  const CheckReport r = run_check(host, o);
  ASSERT_EQ(r.results.size(), 1u);
  const auto& runs = r.results[0].scale_runs;
  ASSERT_GE(runs.size(), 2u);
  auto by_prior = [](const ScaleRunRecord& x) {  // its elements, and one call's own time
    return double(x.units) / kScalePriorElementsPerSecond + scale_prior_part_seconds(Device::cpu);
  };
  EXPECT_DOUBLE_EQ(runs[0].estimate, by_prior(runs[0]));
  EXPECT_DOUBLE_EQ(runs[1].estimate, by_prior(runs[1])) << "the second case was estimated from the first";
  if (runs.size() > 2) {
    EXPECT_NE(runs[2].estimate, by_prior(runs[2])) << "the third was not estimated from the second";
  }
}

// What a scale tier's coverage says, but its time.
void expect_same_scale_coverage(const ScaleCoverage& a, const ScaleCoverage& b) {
  EXPECT_EQ(a.cases, b.cases);
  EXPECT_EQ(a.max_rows, b.max_rows);
  EXPECT_EQ(a.max_dim, b.max_dim);
  EXPECT_EQ(a.max_segment, b.max_segment);
  EXPECT_EQ(a.max_elements, b.max_elements);
  EXPECT_EQ(a.past, b.past);
  EXPECT_EQ(a.rungs, b.rungs);
  EXPECT_EQ(a.skipped, b.skipped);
  EXPECT_EQ(a.shares, b.shares);
}

// With a case budget, any number of workers runs the scale cases of one:
// which positions are scale slots depends on the position alone, and scale
// slot q takes the draws after slot q-1's, whichever worker runs it. A share
// of 1 hands four scale slots to four workers at once.
TEST(ScaleEngine, OneAndFourJobsRunTheSameScaleCases) {
  const std::vector<Subject> host = {make_subject("host", Device::cpu)};
  for (double share : {0.25, 1.0}) {
    SCOPED_TRACE("share " + std::to_string(share));
    CheckOptions o = small_run({"accuracy", "repeatable", "full_write"}, 12);
    o.scale.enabled = true;
    o.scale.share = share;
    o.jobs = 1;
    const CheckReport a = run_check(host, o);
    o.jobs = 4;
    const CheckReport b = run_check(host, o);
    ASSERT_EQ(a.results.size(), b.results.size());
    for (size_t i = 0; i < a.results.size(); ++i) {
      EXPECT_EQ(a.results[i].cases, 12);
      EXPECT_EQ(b.results[i].cases, 12);
      EXPECT_TRUE(a.results[i].passed && b.results[i].passed) << a.results[i].property;
    }
    EXPECT_EQ(a.coverage.scale.cases, share == 1.0 ? 36 : 9);
    expect_same_scale_coverage(a.coverage.scale, b.coverage.scale);
    EXPECT_EQ(a.coverage.sizes, b.coverage.sizes);
    EXPECT_EQ(a.coverage.patterns, b.coverage.patterns);
    EXPECT_EQ(a.coverage.values, b.coverage.values);
  }
}

// The plugin whose bug only rows past 65,535 show (full_write fails at
// scale), and a run whose scale tier reaches it at seed 3, shrinking for up
// to shrink_seconds.
std::vector<Subject> grid_limit_plugin() {
  return {make_subject(std::string("plugin:") + GC_SCALE_GRID_LIMIT, Device::cpu)};
}
CheckOptions grid_limit_scale_run(const std::vector<std::string>& props, double shrink_seconds) {
  CheckOptions o = small_run(props, 40);
  o.seed = 3;
  o.scale.enabled = true;
  o.scale.share = 0.25;
  o.max_shrink_seconds = shrink_seconds;
  return o;
}

// A bug only scale shows: one worker and four find it on the same scale
// draw, count the same cases up to it, and shrink it to the same case.
TEST(ScaleEngine, OneAndFourJobsFindAndShrinkTheSameScaleFailure) {
  const std::vector<Subject> grid = grid_limit_plugin();
  CheckOptions o = grid_limit_scale_run({"inputs_untouched", "full_write"}, 120);
  o.jobs = 1;
  const CheckReport a = run_check(grid, o);
  o.jobs = 4;
  const CheckReport b = run_check(grid, o);
  ASSERT_EQ(a.results.size(), 2u);
  ASSERT_EQ(b.results.size(), 2u);
  ASSERT_TRUE(a.results[1].failure && b.results[1].failure) << "full_write must fail at scale";
  const FailureReport &fa = *a.results[1].failure, &fb = *b.results[1].failure;
  EXPECT_TRUE(fa.claimed && fb.claimed);
  ASSERT_TRUE(fa.scale_original && fb.scale_original);
  EXPECT_EQ(scale_digest(*fa.scale_original), scale_digest(*fb.scale_original));
  ASSERT_TRUE(fa.scale_shrunk && fb.scale_shrunk);
  EXPECT_EQ(scale_digest(*fa.scale_shrunk), scale_digest(*fb.scale_shrunk));
  EXPECT_EQ(fa.scale_shrunk->rows, 65536);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(a.results[i].cases, b.results[i].cases) << a.results[i].property;
    EXPECT_EQ(a.results[i].passed, b.results[i].passed) << a.results[i].property;
  }
  expect_same_scale_coverage(a.coverage.scale, b.coverage.scale);
}

// With no shrink budget a scale failure keeps its case as drawn and says its
// shrink was cut short (the scale shrinker reads a 0 budget as no limit, so
// the tier must not call it at all).
TEST(ScaleEngine, NoShrinkBudgetKeepsTheScaleCaseAsDrawn) {
  CheckOptions o = grid_limit_scale_run({"full_write"}, 0);
  o.stop_on_failure = true;
  const CheckReport r = run_check(grid_limit_plugin(), o);
  ASSERT_TRUE(r.any_claimed_failure());
  const FailureReport& f = *r.results.back().failure;
  ASSERT_TRUE(f.scale_original && f.scale_shrunk);
  EXPECT_EQ(scale_digest(*f.scale_shrunk), scale_digest(*f.scale_original));
  EXPECT_EQ(f.shrink_steps, 0);
  EXPECT_TRUE(f.shrink_cut_short);
}

// A bug that only rows past 65,535 show: the small tier cannot reach it, the
// scale tier does, shrinks it and, with stop_on_failure, ends the run there.
TEST(ScaleEngine, CatchesWhatOnlyScaleShowsAndStops) {
  const std::vector<Subject> grid = grid_limit_plugin();
  CheckOptions o = grid_limit_scale_run({"inputs_untouched", "full_write", "accuracy", "repeatable"}, 120);
  o.scale.enabled = false;
  CheckReport none = run_check(grid, o);
  EXPECT_FALSE(none.any_claimed_failure()) << "the small tier reaches 64 rows";
  o.scale.enabled = true;
  o.stop_on_failure = true;
  const CheckReport r = run_check(grid, o);
  ASSERT_TRUE(r.any_claimed_failure());
  EXPECT_TRUE(r.stopped_on_failure);
  EXPECT_EQ(r.results.size(), 2u) << "inputs_untouched passes; full_write fails and ends the run";
  const FailureReport& f = *r.results.back().failure;
  ASSERT_TRUE(f.scale_original);
  ASSERT_TRUE(f.scale_shrunk);
  EXPECT_EQ(f.scale_shrunk->rows, 65536);
  EXPECT_EQ(f.scale_shrunk->dim, 1);
  EXPECT_EQ(failure_shape(f).rows, 65536);
  EXPECT_NE(describe_found_case(f).find("rows="), std::string::npos);
}


// Drawing scale cases on the GPU's ladder (no device needed: the limits are
// given) stays cheap: the draw's vacuity check once built candidate plans of
// 16 million rows seven times a draw, and a 20 s check on the H200 spent over
// 60 s in draws that never ran. Thirty draws took 57 s here that way. The
// forty-five draws now take 13.6 s on two idle cores, each 16-million-row
// draw one index and plan, and 22.5 s with the cores shared by a build. The
// bound is set well above both, and well below the old way's 85 s or so.
TEST(ScaleTier, DrawingOnTheGpuLadderIsCheap) {
  ScaleLimits l;
  l.device = Device::cuda;
  l.max_elements = int64_t(1) << 34;
  l.memory_bytes = uint64_t(80) << 30;
  double total = 0;
  // gate_residual's ten draws a property, and five of rmsnorm_modulate's
  // (the same ladder, plus its eps drawn from one row's mean square)
  for (const OpSchema* op : {&gate_residual_schema(), &rmsnorm_modulate_schema()}) {
  const double before = total;
  for (const char* property : {"segment_invariance", "row_invariance", "repeatable"})
    for (int64_t i = 0; i < (op == &gate_residual_schema() ? 10 : 5); ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      const ScaleSpec s = draw_scale_case(*op, 1054733551882ull, property, i, l);
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      total += secs;
      if (secs > 1.0)
        std::printf("%s draw %lld: %.2f s (rows %lld, plan %s, %s)\n", property, (long long)i, secs,
                    (long long)s.rows, s.plan_kind.c_str(), s.rung.c_str());
    }
  std::printf("%s: %.2f s\n", op->name, total - before);
  }
  EXPECT_LT(total, 45.0) << "forty-five draws took " << total << " s";
}

// A budget judges a draw by its shape before the draw builds anything: the
// shape draw_scale_case_if shows `keep` is the finished draw's, a draw kept
// is draw_scale_case's bit for bit, and one refused stops there.
TEST(ScaleTier, ADrawIsJudgedByItsShapeFirst) {
  ScaleLimits gpu;
  gpu.device = Device::cuda;
  gpu.max_elements = int64_t(1) << 34;
  gpu.memory_bytes = uint64_t(80) << 30;
  const ScaleLimits cpu = scale_limits(Device::cpu, ScaleOptions{});
  int compared = 0, refused = 0;
  for (const OpSchema* op : {&gate_residual_schema(), &rmsnorm_modulate_schema()})
    for (const ScaleLimits* l : std::vector<const ScaleLimits*>{&cpu, &gpu})
      for (const char* property : {"segment_invariance", "row_invariance", "accuracy"})
        for (int64_t i = 0; i < 12; ++i) {
          std::optional<ScaleSpec> seen;
          auto refuse = draw_scale_case_if(*op, 1054733551882ull, property, i, *l, [&](const ScaleSpec& s) {
            seen = s;
            return false;
          });
          EXPECT_FALSE(refuse.has_value());
          ++refused;
          ASSERT_TRUE(seen.has_value());
          if (seen->rows * seen->dim > (int64_t(1) << 20)) continue;  // finishing it would cost seconds
          const auto kept = draw_scale_case_if(*op, 1054733551882ull, property, i, *l, [](const ScaleSpec&) { return true; });
          ASSERT_TRUE(kept.has_value());
          const ScaleSpec full = draw_scale_case(*op, 1054733551882ull, property, i, *l);
          EXPECT_EQ(*kept, full);
          EXPECT_EQ(seen->dtype, full.dtype);
          EXPECT_EQ(seen->rows, full.rows);
          EXPECT_EQ(seen->dim, full.dim);
          ++compared;
        }
  EXPECT_GT(compared, 40);
  EXPECT_EQ(refused, 144);
}

// Every draw of an invariance property moves rows, on the CPU's ladder too,
// whose wide rungs draw two or three rows (seed 12 once drew two rows of one
// gate for segment_invariance: a vacuous case, reported as a failure).
TEST(ScaleTier, EveryInvarianceDrawMovesRowsOnTheCpu) {
  const ScaleLimits l = scale_limits(Device::cpu, ScaleOptions{});
  int drawn = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed)
    for (const char* p : {"row_invariance", "segment_invariance"})
      for (int64_t j = 0; j < 6; ++j) {
        const ScaleCase c = make_scale_case(draw_scale_case(seed, p, j, l));
        EXPECT_TRUE(plan_moves_rows(p, c.shadow())) << "seed " << seed << " " << p << " draw " << j << ": " << describe(c);
        ++drawn;
      }
  EXPECT_EQ(drawn, 240);
}

}  // namespace
}  // namespace gatecheck
