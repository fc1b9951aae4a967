// --isolate: a crashing or hanging implementation becomes a reported failure
// and this test process lives on; a normal call comes back bit for bit.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <unistd.h>

#include "tests/gate_residual_test_names.h"
#include "bits_equal.h"
#include "harness/isolate/isolate.h"
#include "random_case.h"

namespace gatecheck {
namespace {

using test::bits_equal;
using test::random_case;

Implementation plugin(const char* path) { return make_implementation(std::string("plugin:") + path, Device::cpu); }

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << text << "' should contain '" << part << "'";
}

void expect_same(const RunResult& a, const RunResult& b) {
  EXPECT_EQ(a.status.kind, b.status.kind);
  EXPECT_EQ(a.status.message, b.status.message);
  for (const char* name : kOutputNames)
    EXPECT_TRUE(bits_equal(name, a.outputs[name], b.outputs[name]));
  ASSERT_EQ(a.memory.size(), b.memory.size());
  for (size_t i = 0; i < a.memory.size(); ++i) {
    EXPECT_EQ(a.memory[i].kind, b.memory[i].kind);
    EXPECT_EQ(a.memory[i].tensor, b.memory[i].tensor);
    EXPECT_EQ(a.memory[i].first, b.memory[i].first);
    EXPECT_EQ(a.memory[i].count, b.memory[i].count);
    EXPECT_EQ(a.memory[i].detail, b.memory[i].detail);
  }
}

TEST(Isolate, SegfaultIsReportedNotFatal) {
  const Implementation impl = plugin(GC_PLUGIN_SEGFAULT);
  const Case c = random_case(DType::f32, 13, 4, 2, 1);  // the plugin crashes on 13 rows
  const RunResult r = run_case_isolated(impl, c, {}, 30);
  EXPECT_EQ(r.status.kind, ErrorKind::implementation);
  expect_contains(r.status.message, "crashed");
  expect_contains(r.status.message, "SIGSEGV");
  expect_contains(r.status.message, impl.label());
  EXPECT_EQ(r.outputs["out"].rows, 13);  // shaped like the case, for callers that index it
  EXPECT_TRUE(r.memory.empty());
}

TEST(Isolate, HangIsKilledAtTheTimeout) {
  const Implementation impl = plugin(GC_PLUGIN_HANG);
  const auto t0 = std::chrono::steady_clock::now();
  const RunResult r = run_case_isolated(impl, random_case(DType::f32, 13, 4, 2, 1), {}, 1.0);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.status.kind, ErrorKind::implementation);
  expect_contains(r.status.message, "hung: no result within 1 s");
  EXPECT_GE(took, 1.0);
  EXPECT_LT(took, 10.0);
}

// A normal call's result, memory findings included, crosses the pipe intact;
// here on a plugin that only crashes on 13 rows, and on one writing out of bounds.
TEST(Isolate, NormalResultsComeBackBitForBit) {
  for (const char* path : {GC_PLUGIN_SEGFAULT, GC_PLUGIN_OOB_WRITE, GC_EXAMPLE_PLUGIN}) {
    const Implementation impl = plugin(path);
    for (DType t : {DType::f32, DType::bf16, DType::f16}) {
      const Case c = random_case(t, 12, 5, 3, 4);
      SCOPED_TRACE(std::string(path) + " " + describe(c));
      expect_same(run_case_isolated(impl, c, {}, 30), run_case(impl, c));
    }
  }
  // An error status (bad input) crosses too.
  Case bad = random_case(DType::f32, 2, 2, 2, 1);
  bad.index[1] = 5;
  const Implementation ex = plugin(GC_EXAMPLE_PLUGIN);
  const RunResult r = run_case_isolated(ex, bad, {}, 30);
  EXPECT_FALSE(r.status.ok());
  expect_same(r, run_case(ex, bad));
}

TEST(Isolate, TheOutOfBoundsFindingSurvivesIsolation) {
  const RunResult r = run_case_isolated(plugin(GC_PLUGIN_OOB_WRITE), random_case(DType::f32, 3, 4, 2, 1), {}, 30);
  ASSERT_EQ(r.memory.size(), 1u);
  EXPECT_EQ(r.memory[0].kind, MemoryFinding::oob_write);
}

// The fresh-process child (used for CUDA, tested here on the CPU): this test
// binary is re-executed and answers before main().
TEST(FreshProcess, ResultsComeBackBitForBit) {
  for (const Implementation& impl : {plugin(GC_EXAMPLE_PLUGIN), plugin(GC_PLUGIN_OOB_WRITE),
                                     make_implementation("host", Device::cpu)}) {
    RunOptions opt;
    opt.poison = 1;
    const Case c = random_case(DType::bf16, 12, 5, 3, 4);
    SCOPED_TRACE(impl.label() + " " + describe(c));
    expect_same(run_case_in_fresh_process(impl, c, opt, 60), run_case(impl, c, opt));
  }
}

TEST(FreshProcess, CrashHangAndUnknownImplementationAreReported) {
  RunResult r = run_case_in_fresh_process(plugin(GC_PLUGIN_SEGFAULT), random_case(DType::f32, 13, 4, 2, 1), {}, 60);
  expect_contains(r.status.message, "SIGSEGV");
  r = run_case_in_fresh_process(plugin(GC_PLUGIN_HANG), random_case(DType::f32, 13, 4, 2, 1), {}, 3);
  expect_contains(r.status.message, "hung: no result within 3 s");
  Implementation unknown = plugin(GC_EXAMPLE_PLUGIN);
  unknown.name = "no-such-implementation";
  r = run_case_in_fresh_process(unknown, random_case(DType::f32, 2, 2, 1, 1), {}, 60);
  EXPECT_EQ(r.status.kind, ErrorKind::implementation);
  expect_contains(r.status.message, "unknown implementation 'no-such-implementation'");
}

// Named tasks in a fresh process (error_inputs' probes for CUDA and
// torch-eager under --isolate), registered at static initialisation before
// the worker hook: the case and the argument arrive whole, the Status comes
// back, a crash is named, an unknown task is an error that says so.
uint64_t case_checksum(const Case& c) {
  uint64_t h = uint64_t(c.rows) * 31 + uint64_t(c.dim) * 7 + uint64_t(c.gates);
  for (int64_t i : c.index) h = h * 1099511628211ull + uint64_t(i);
  for (const HostTensor* t : {&c.input("res"), &c.input("gate"), &c.input("y"), &c.input("grad_out")})
    for (uint8_t b : t->bytes) h = h * 1099511628211ull + b;
  return h;
}
Status echo_task(const Implementation& impl, const Case& c, int64_t arg) {
  return Status::error(ErrorKind::implementation, impl.name + " " + std::to_string(case_checksum(c)) + " " +
                                                      std::to_string(arg) + " pid " + std::to_string(::getpid()));
}
Status segfault_task(const Implementation&, const Case&, int64_t) {
  std::raise(SIGSEGV);
  return Status::success();
}
struct TestTasks {
  TestTasks() {
    register_fresh_process_task("test-echo", echo_task);
    register_fresh_process_task("test-segfault", segfault_task);
  }
} test_tasks __attribute__((init_priority(kFreshProcessTaskPriority)));

TEST(FreshProcessTask, CaseAndArgumentArriveAndTheStatusComesBack) {
  const Case c = random_case(DType::bf16, 12, 5, 3, 4);
  const Status s = call_in_fresh_process("test-echo", make_implementation("host", Device::cpu), c, -7, 60);
  const std::string want = "host " + std::to_string(case_checksum(c)) + " -7 pid ";
  EXPECT_EQ(s.message.substr(0, want.size()), want);
  EXPECT_NE(s.message, want + std::to_string(::getpid())) << "it ran in this process";
}

TEST(FreshProcessTask, CrashAndUnknownTaskAreReported) {
  const Case c = random_case(DType::f32, 3, 4, 2, 1);
  Status s = call_in_fresh_process("test-segfault", plugin(GC_EXAMPLE_PLUGIN), c, 0, 60);
  EXPECT_EQ(s.kind, ErrorKind::implementation);
  expect_contains(s.message, "SIGSEGV");
  expect_contains(s.message, "the isolated child");
  s = call_in_fresh_process("no-such-task", plugin(GC_EXAMPLE_PLUGIN), c, 0, 60);
  expect_contains(s.message, "task 'no-such-task' is not registered");
  EXPECT_FALSE(register_fresh_process_task("test-echo", echo_task)) << "a name is registered once";
}

TEST(CallIsolated, ReturnsTheChildsStatus) {
  EXPECT_TRUE(call_isolated([] { return Status::success(); }, 30).ok());
  const Status s = call_isolated([] { return Status::error(ErrorKind::no_gates, "gates = 0 with rows = 3"); }, 30);
  EXPECT_EQ(s.kind, ErrorKind::no_gates);
  EXPECT_EQ(s.message, "gates = 0 with rows = 3");
}

TEST(CallIsolated, AbortExitAndHangAreReported) {
  Status s = call_isolated([]() -> Status { std::abort(); }, 30);
  EXPECT_EQ(s.kind, ErrorKind::implementation);
  expect_contains(s.message, "SIGABRT");
  s = call_isolated([]() -> Status { ::_exit(7); }, 30);
  expect_contains(s.message, "exited with status 7");
  s = call_isolated([]() -> Status { throw std::runtime_error("boom"); }, 30);
  expect_contains(s.message, "exited with status 4");
  s = call_isolated([]() -> Status { for (;;) ::pause(); }, 0.5);
  expect_contains(s.message, "hung: no result within 0.5 s");
}

// A result far larger than a pipe's buffer is read while the child writes it.
TEST(CallIsolated, LargeResultsDoNotDeadlock) {
  const std::string big(1 << 22, 'x');
  const Status s = call_isolated([&] { return Status::error(ErrorKind::implementation, big); }, 30);
  EXPECT_EQ(s.message.size(), big.size());
}

}  // namespace
}  // namespace gatecheck
