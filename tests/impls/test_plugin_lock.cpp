// The plugin ABI promises a plugin calls from one thread at a time; a check
// with --jobs > 1 keeps that promise with a lock per plugin. The plugin here
// (plugins/static_scratch_plugin.c) is right from one thread and wrong from
// two at once:
//  - called straight through its ABI from two threads, its results really are
//    corrupted (so the tests below can fail);
//  - through the harness from two threads, every result is right;
//  - a check with 4 workers gives it every verdict a check with 1 gives
//    (all passing), and the same check with the lock taken away (the
//    implementation marked thread-safe, which it is not) fails.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "tests/gate_residual_test_names.h"
#include "harness/impls/implementation.h"
#include "harness/run/runner.h"
#include "properties/engine/check_engine.h"
#include "random_case.h"

namespace gatecheck {
namespace {

Implementation scratch_plugin() { return make_implementation(std::string("plugin:") + GC_PLUGIN_STATIC_SCRATCH, Device::cpu); }

// Forward of c by `call` on two threads at once, `rounds` times each; how many
// results differed from what the plugin gives on one thread.
template <class Call>
int corrupted_results(const Implementation& impl, Call call, int rounds) {
  const Case a = test::random_case(DType::f32, 64, 48, 5, 1), b = test::random_case(DType::f32, 64, 48, 5, 2);
  std::vector<uint8_t> want[2];
  const Case* cases[2] = {&a, &b};
  for (int t = 0; t < 2; ++t) {
    want[t].resize(cases[t]->input("res").bytes.size());
    const gatecheck_problem p = cases[t]->problem(Device::cpu);
    EXPECT_EQ(impl.api->forward(&p, cases[t]->input("res").data(), cases[t]->input("gate").data(), cases[t]->index.data(),
                                cases[t]->input("y").data(), want[t].data()),
              0);
  }
  std::atomic<int> ready{0}, wrong{0};
  auto worker = [&](int t) {
    const Case& c = *cases[t];
    const gatecheck_problem p = c.problem(Device::cpu);
    std::vector<uint8_t> out(want[t].size());
    ++ready;
    while (ready.load() < 2) {
    }
    for (int r = 0; r < rounds; ++r) {
      call(impl, p, c, out.data());
      if (out != want[t]) ++wrong;
    }
  };
  std::thread t0(worker, 0), t1(worker, 1);
  t0.join();
  t1.join();
  return wrong.load();
}

TEST(PluginLock, TheScratchPluginIsWrongFromTwoThreadsAtOnce) {
  const Implementation impl = scratch_plugin();
  ASSERT_FALSE(impl.thread_safe);
  const int wrong = corrupted_results(
      impl,
      [](const Implementation& i, const gatecheck_problem& p, const Case& c, void* out) {
        i.api->forward(&p, c.input("res").data(), c.input("gate").data(), c.index.data(), c.input("y").data(), out);  // no lock
      },
      300);
  EXPECT_GT(wrong, 0) << "two threads calling the plugin at once never corrupted a result: this test proves nothing";
}

TEST(PluginLock, CallsThroughTheHarnessTakeTurns) {
  const int wrong = corrupted_results(
      scratch_plugin(),
      [](const Implementation& i, const gatecheck_problem& p, const Case& c, void* out) {
        EXPECT_TRUE(forward_gate_residual(i, p, c.input("res").data(), c.input("gate").data(), c.index.data(), c.input("y").data(), out).ok());
      },
      300);
  EXPECT_EQ(wrong, 0);
}

CheckOptions small_check(int jobs) {
  CheckOptions o;
  o.seed = 7;
  o.seconds = 0;
  o.max_cases = 25;
  o.limits.max_rows = 48;
  o.limits.max_dim = 24;
  o.limits.max_gates = 9;
  o.limits.big_dims = false;
  o.max_shrink_seconds = 1;
  o.jobs = jobs;
  return o;
}

TEST(PluginLock, FourJobsGiveTheVerdictsOfOne) {
  const Subject s = make_subject(std::string("plugin:") + GC_PLUGIN_STATIC_SCRATCH, Device::cpu);
  const CheckReport one = run_check({s}, small_check(1)), four = run_check({s}, small_check(4));
  ASSERT_EQ(one.results.size(), four.results.size());
  for (size_t i = 0; i < one.results.size(); ++i) {
    EXPECT_TRUE(one.results[i].passed) << one.results[i].property;
    EXPECT_TRUE(four.results[i].passed) << four.results[i].property << ": "
                                        << (four.results[i].failure ? four.results[i].failure->verdict.message : "");
    EXPECT_EQ(one.results[i].cases, four.results[i].cases) << one.results[i].property;
  }
}

TEST(PluginLock, WithoutTheLockFourJobsFail) {
  Subject s = make_subject(std::string("plugin:") + GC_PLUGIN_STATIC_SCRATCH, Device::cpu);
  s.thread_safe = true;  // not true: so no lock, and calls overlap
  const CheckReport r = run_check({s}, small_check(4));
  EXPECT_TRUE(r.any_claimed_failure()) << "four workers calling a plugin that is not thread-safe without the lock "
                                          "found nothing: the test above proves nothing";
}

}  // namespace
}  // namespace gatecheck
