// call_in_exec_worker: the fresh-process worker (this test binary re-executed)
// that a thread keeps from call to call. It is reused while its calls
// succeed; a crash, a hang or a failed call retires it, and the next call
// starts another; it serves the next thread when its own ends, and never
// outlives its parent process.
#include <gtest/gtest.h>

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <string>
#include <thread>

#include "harness/isolate/isolate.h"

namespace gatecheck {
namespace {

Status pid_task(const Implementation&, const Case&, int64_t) {
  return {ErrorKind::none, "pid " + std::to_string(::getpid())};  // success, with a message
}
Status fail_task(const Implementation&, const Case&, int64_t) {
  return Status::error(ErrorKind::implementation, "pid " + std::to_string(::getpid()));
}
Status crash_task(const Implementation&, const Case&, int64_t) {
  std::raise(SIGSEGV);
  return Status::success();
}
Status hang_task(const Implementation&, const Case&, int64_t) {
  for (;;) ::pause();
}
struct Tasks {
  Tasks() {
    register_fresh_process_task("exec-worker-pid", pid_task);
    register_fresh_process_task("exec-worker-fail", fail_task);
    register_fresh_process_task("exec-worker-crash", crash_task);
    register_fresh_process_task("exec-worker-hang", hang_task);
  }
} tasks __attribute__((init_priority(kFreshProcessTaskPriority)));

Implementation host() { return make_implementation("host", Device::cpu); }
Case small_case() { return make_case(DType::f32, 2, 2, 1); }

// The pid of the worker that answers `task` ("pid N" in its message).
pid_t worker_pid(const char* task = "exec-worker-pid", double timeout = 60) {
  const Status s = call_in_exec_worker(task, host(), small_case(), 0, timeout);
  EXPECT_EQ(s.message.rfind("pid ", 0), 0u) << s.message;
  return s.message.rfind("pid ", 0) == 0 ? pid_t(std::atol(s.message.c_str() + 4)) : -1;
}

// Is pid a live process (not a zombie)? A worker reaped by its parent is gone.
bool alive(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
  if (!f) return false;
  char state = '?';
  const int got = std::fscanf(f, "%*d (%*[^)]) %c", &state);
  std::fclose(f);
  return got == 1 && state != 'Z';
}

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << text << "' should contain '" << part << "'";
}

TEST(ExecWorker, KeptFromCallToCall) {
  const pid_t a = worker_pid();
  ASSERT_GT(a, 0);
  EXPECT_NE(a, ::getpid()) << "it ran in this process";
  EXPECT_EQ(worker_pid(), a) << "a second call started another process";
  EXPECT_EQ(worker_pid(), a);
  EXPECT_TRUE(alive(a));
}

// The knob that benchmarks the reuse: a process a call.
TEST(ExecWorker, KeepWorkersZeroStartsOneACall) {
  ::setenv("GATECHECK_ISOLATE_KEEP_WORKERS", "0", 1);
  const pid_t a = worker_pid(), b = worker_pid();
  ::unsetenv("GATECHECK_ISOLATE_KEEP_WORKERS");
  EXPECT_NE(a, b);
  EXPECT_FALSE(alive(a));
}

TEST(ExecWorker, CrashIsReportedAndTheNextCallStartsAnother) {
  const pid_t a = worker_pid();
  const Status s = call_in_exec_worker("exec-worker-crash", host(), small_case(), 0, 60);
  EXPECT_EQ(s.kind, ErrorKind::implementation);
  expect_contains(s.message, "crashed: the isolated child (pid " + std::to_string(a) + ") was killed by SIGSEGV");
  expect_contains(s.message, "host@cpu");
  EXPECT_FALSE(alive(a));
  const pid_t b = worker_pid();
  EXPECT_NE(b, a);
  EXPECT_EQ(worker_pid(), b);
}

TEST(ExecWorker, HangIsKilledAtTheTimeoutAndReplaced) {
  const pid_t a = worker_pid();
  const auto t0 = std::chrono::steady_clock::now();
  const Status s = call_in_exec_worker("exec-worker-hang", host(), small_case(), 0, 1.0);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  expect_contains(s.message, "hung: no result within 1 s; the isolated child (pid " + std::to_string(a) + ") was killed");
  EXPECT_GE(took, 1.0);
  EXPECT_LT(took, 10.0);
  EXPECT_FALSE(alive(a));
  EXPECT_NE(worker_pid(), a);
}

// A call that does not succeed may have left the process unfit (a sticky CUDA
// error): its worker answers it, then is retired.
TEST(ExecWorker, AFailedCallRetiresTheWorker) {
  const pid_t a = worker_pid();
  const Status s = call_in_exec_worker("exec-worker-fail", host(), small_case(), 0, 60);
  EXPECT_EQ(s.kind, ErrorKind::implementation);
  EXPECT_EQ(s.message, "pid " + std::to_string(a)) << "the same worker answered the failing call";
  EXPECT_FALSE(alive(a));
  EXPECT_NE(worker_pid(), a);
}

// A thread's worker is its own while the thread lives; when the thread ends,
// the worker waits for the next thread (the engine starts new threads each
// run, the bench each row), rather than another process be started.
TEST(ExecWorker, EachThreadHasItsOwnAndLeavesItToTheNext) {
  const pid_t mine = worker_pid();
  pid_t first = -1, second = -1, a = -1, b = -1;
  std::thread([&] { first = worker_pid(); }).join();
  EXPECT_NE(first, mine);
  EXPECT_TRUE(alive(first)) << "the worker ended with its thread";
  std::thread([&] { second = worker_pid(); }).join();
  EXPECT_EQ(second, first) << "the next thread started another process";
  std::thread ta([&] { a = worker_pid(); std::this_thread::sleep_for(std::chrono::milliseconds(300)); });
  std::thread tb([&] { b = worker_pid(); std::this_thread::sleep_for(std::chrono::milliseconds(300)); });
  ta.join();
  tb.join();
  EXPECT_NE(a, b) << "two threads at once shared a worker";
  EXPECT_TRUE(a == first || b == first);
  EXPECT_EQ(worker_pid(), mine);
}

// A parent killed outright (no destructors) takes its idle worker with it
// (PR_SET_PDEATHSIG from a thread that lasts as long as the process, and
// end-of-file on the worker's socket).
TEST(ExecWorker, EndsWhenItsParentIsKilled) {
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);  // the orphaned worker comes to us, to be waited for
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t parent = ::fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {
    ::close(fds[0]);
    // On a new thread (this thread's map of workers is the test's, copied),
    // which ends: its worker waits idle, as a check thread's does at the end
    // of a run.
    std::thread([&] {
      const Status s = call_in_exec_worker("exec-worker-pid", host(), small_case(), 0, 60);
      const pid_t w = s.message.rfind("pid ", 0) == 0 ? pid_t(std::atol(s.message.c_str() + 4)) : -1;
      if (::write(fds[1], &w, sizeof w) != sizeof w) ::_exit(1);
    }).join();
    for (;;) ::pause();
  }
  ::close(fds[1]);
  pid_t w = -1;
  ASSERT_EQ(::read(fds[0], &w, sizeof w), ssize_t(sizeof w));
  ::close(fds[0]);
  ASSERT_GT(w, 0);
  EXPECT_TRUE(alive(w));
  ::kill(parent, SIGKILL);
  int st = 0;
  ASSERT_EQ(::waitpid(parent, &st, 0), parent);
  bool ended = false;
  for (int i = 0; i < 1000 && !ended; ++i) {  // 10 s at most
    const pid_t r = ::waitpid(w, &st, WNOHANG);
    ended = r == w || (r < 0 && errno == ECHILD && !alive(w));
    if (!ended) ::usleep(10000);
  }
  if (!ended) {  // not left behind by this test
    ::kill(w, SIGKILL);
    ::waitpid(w, &st, 0);
  }
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  EXPECT_TRUE(ended) << "the worker " << w << " outlived its parent";
}

}  // namespace
}  // namespace gatecheck
