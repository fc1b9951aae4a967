#include "isolate_detail.h"

#include <cuda_runtime.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../impls/plugin_call_lock.h"
#include "../impls/fd_write.h"
#include "../impls/plugin_stdout.h"

// false unless the program defines it (isolate.h).
extern "C" {
__attribute__((weak)) bool gatecheck_isolate_worker_in_main = false;
}

namespace gatecheck {

using namespace isolate_detail;

namespace isolate_detail {

namespace {

bool write_all(int fd, const std::vector<uint8_t>& b) { return gatecheck::write_all(fd, b.data(), b.size()); }

}  // namespace

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  const char* what = strsignal(sig);
  std::string s = abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
  if (what) s += std::string(" (") + what + ")";
  return s;
}

namespace {

// Forks; the child runs child(result_fd) (which must not return) and the
// parent collects what it writes to result_fd, or a Status saying why there
// is nothing (crash, exit, timeout).
// Held from a child's pipe or socket being made until the parent has closed
// the child's end: so no other thread's fork copies that end into a child of
// its own, where it would keep the pipe from ever reaching end-of-file (a
// child kept from call to call lives long).
}  // namespace

std::mutex g_forking;

// fork() while no other thread is mid-call in a plugin or inside a stdout
// scope, so that the child's copy of this process holds none of their locks.
// The caller holds g_forking.
pid_t fork_paused() {
  PluginCallsPaused paused;
  PluginStreamsPaused streams;
  const pid_t pid = ::fork();
  streams.release();
  paused.release();
  return pid;
}

// A failed fork: the two ends made for the child are closed.
Status fork_failed(const int ends[2]) {
  const int err = errno;
  ::close(ends[0]);
  ::close(ends[1]);
  return Status::error(ErrorKind::implementation, std::string("isolate: fork failed: ") + std::strerror(err));
}

namespace {

Status run_in_child(const std::function<void(int)>& child, double timeout_seconds,
                    std::vector<uint8_t>* result) {
  int fds[2];
  flush_stdout_streams();  // or buffered output would be written twice
  std::fflush(nullptr);    // (the child flushes std::cout before a plugin call)
  std::unique_lock<std::mutex> forking(g_forking);
  if (::pipe(fds) != 0)
    return Status::error(ErrorKind::implementation, std::string("isolate: pipe failed: ") + std::strerror(errno));
  const pid_t pid = fork_paused();
  if (pid < 0) return fork_failed(fds);
  if (pid == 0) {
    ::close(fds[0]);
    child(fds[1]);
    ::_exit(5);  // not reached
  }
  ::close(fds[1]);
  forking.unlock();

  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::duration_cast<clock::duration>(
                                           std::chrono::duration<double>(timeout_seconds));
  auto ms_left = [&] {  // rounded up: poll must not give up before the deadline
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - clock::now()).count();
    return left > 0 ? int(std::min<long long>(left, 1 << 30)) : 0;
  };
  bool timed_out = false, eof = false;
  uint8_t buf[1 << 16];
  while (!eof) {  // read as it comes, or a large result would fill the pipe and block the child
    pollfd pfd{fds[0], POLLIN, 0};
    const int ms = ms_left();
    if (ms == 0) { timed_out = true; break; }
    const int pr = ::poll(&pfd, 1, ms);
    if (pr < 0 && errno == EINTR) continue;
    if (pr == 0) { timed_out = true; break; }
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) eof = true;
    else result->insert(result->end(), buf, buf + n);
  }
  ::close(fds[0]);

  // The child closed its end (or we gave up): wait for it, killing it at the deadline.
  int wstatus = 0;
  if (timed_out) ::kill(pid, SIGKILL);
  for (;;) {
    const pid_t w = ::waitpid(pid, &wstatus, timed_out ? 0 : WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    if (w == 0 && ms_left() == 0) {
      timed_out = true;
      ::kill(pid, SIGKILL);
    } else if (w == 0) {
      ::usleep(1000);
    }
  }
  char secs[32];
  std::snprintf(secs, sizeof secs, "%g", timeout_seconds);
  if (timed_out)
    return Status::error(ErrorKind::implementation,
                         std::string("hung: no result within ") + secs + " s; the isolated child (pid " +
                             std::to_string(pid) + ") was killed");
  if (WIFSIGNALED(wstatus))
    return Status::error(ErrorKind::implementation,
                         "crashed: the isolated child (pid " + std::to_string(pid) + ") was killed by " +
                             signal_name(WTERMSIG(wstatus)));
  // A child that wrote nothing ended before the call returned (an exit()
  // inside the implementation), whatever status it chose, 0 included.
  if (WIFEXITED(wstatus) && (WEXITSTATUS(wstatus) != 0 || result->empty()))
    return Status::error(ErrorKind::implementation,
                         "exited: the isolated child (pid " + std::to_string(pid) + ") exited with status " +
                             std::to_string(WEXITSTATUS(wstatus)) + " before returning a result");
  return Status::success();
}

RunResult empty_result(const Case& c, Status s) {
  RunResult r;
  r.status = std::move(s);
  r.outputs = outputs_for(c);
  return r;
}


// The forked child of call_isolated and of CPU runs: runs body, sends its
// bytes, and exits without the parent's atexit handlers or destructors.
[[noreturn]] void run_body(const std::function<std::vector<uint8_t>()>& body, int fd) {
  int code = 0;
  try {
    code = write_all(fd, body()) ? 0 : 3;
  } catch (...) {
    code = 4;  // the body threw: reported as an abnormal exit
  }
  std::fflush(nullptr);
  ::_exit(code);
}

// ---- a fresh process for CUDA (a worker per call)  -------------------------------------------------
// A forked child cannot use CUDA once the parent has initialised it, and a
// parent has always done so by the time it runs a CUDA implementation
// (cudaGetDeviceCount alone is enough). So for CUDA the child re-executes
// this program (/proc/self/exe) with GATECHECK_ISOLATE_WORKER set; the hook
// below sees it before main(), runs the request it finds in an inherited
// memfd, and writes the result to an inherited pipe. The implementation is
// rebuilt from its spec (make_implementation), so this works for every
// implementation the registry can make.

}  // namespace

// Tasks by name; a function-local static, so registrars at static
// initialisation may run in any order.
std::map<std::string, FreshProcessTask>& fresh_process_tasks() {
  static std::map<std::string, FreshProcessTask> tasks;
  return tasks;
}

Status unregistered_task(const std::string& task) {
  return Status::error(ErrorKind::implementation, "isolate: task '" + task + "' is not registered in this program");
}

Status run_task(const Request& q, const Implementation& impl) {
  const auto task = fresh_process_tasks().find(q.task);
  return task == fresh_process_tasks().end() ? unregistered_task(q.task) : task->second(impl, q.c, q.arg);
}

namespace {

[[noreturn]] void worker_main(const char* fds) {
  int request_fd = -1, result_fd = -1;
  if (std::strncmp(fds, kKeptWorkerPrefix, std::strlen(kKeptWorkerPrefix)) == 0) {
    const int fd = std::atoi(fds + std::strlen(kKeptWorkerPrefix));
    ::unsetenv(kWorkerEnv);
    serve_exec_worker(fd);
  }
  if (std::sscanf(fds, "%d,%d", &request_fd, &result_fd) != 2) ::_exit(6);
  ::unsetenv(kWorkerEnv);  // not for processes this one starts
  std::vector<uint8_t> request;
  uint8_t buf[1 << 16];
  for (ssize_t n; (n = ::pread(request_fd, buf, sizeof buf, off_t(request.size()))) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) ::_exit(6);
    request.insert(request.end(), buf, buf + n);
  }
  ::close(request_fd);
  run_body(
      [&] {
        Request q = decode_request(request);
        if (!q.task.empty()) {
          Status s;
          const auto task = fresh_process_tasks().find(q.task);
          try {
            s = task == fresh_process_tasks().end() ? unregistered_task(q.task)
                                                    : task->second(make_implementation(q.spec, q.device, *q.c.op), q.c, q.arg);
          } catch (const std::exception& e) {
            s = Status::error(ErrorKind::implementation, e.what());
          }
          return encode(s);
        }
        RunResult r;
        try {
          r = run_case(make_implementation(q.spec, q.device, *q.c.op), q.c, q.opt);
        } catch (const std::exception& e) {
          r = empty_result(q.c, Status::error(ErrorKind::implementation, e.what()));
        }
        return encode(r);
      },
      result_fd);
}

// Runs before main() in every program that links the harness, unless the
// program runs the worker from main() itself (see isolate.h): static
// initialisers of objects linked after this one, such as the CUDA runtime's
// registration of our kernels, may not have run yet at this point.
// Its priority is the default (the last), so that the tasks registered with
// kFreshProcessTaskPriority are there when it runs.
struct WorkerHook {
  WorkerHook() {
    if (!gatecheck_isolate_worker_in_main)
      if (const char* fds = std::getenv(kWorkerEnv)) worker_main(fds);
  }
} g_worker_hook;

}  // namespace

}  // namespace isolate_detail

void run_isolate_worker_if_requested() {
  if (const char* fds = std::getenv(kWorkerEnv)) worker_main(fds);
}

// The environment for execve of a worker: this process's, with kWorkerEnv
// set to `value` in `entry` (which must outlive the result). Passed to execve
// rather than set: setenv() takes a lock that another thread of the parent
// may have held at a fork.
std::vector<char*> isolate_detail::worker_environment(const std::string& value, std::string* entry) {
  const std::string prefix = std::string(kWorkerEnv) + "=";
  *entry = prefix + value;
  std::vector<char*> env;
  for (char** e = environ; e && *e; ++e)
    if (std::strncmp(*e, prefix.c_str(), prefix.size()) != 0) env.push_back(*e);
  env.push_back(const_cast<char*>(entry->c_str()));
  env.push_back(nullptr);
  return env;
}

namespace {

[[noreturn]] void exec_worker(const std::vector<uint8_t>& request, int result_fd) {
  const int request_fd = ::memfd_create("gatecheck-isolate-request", 0);
  if (request_fd < 0 || !write_all(request_fd, request)) ::_exit(126);
  std::string worker;
  std::vector<char*> env = worker_environment(std::to_string(request_fd) + "," + std::to_string(result_fd), &worker);
  char self[] = "/proc/self/exe";
  char* argv[] = {self, nullptr};
  ::execve(self, argv, env.data());
  ::_exit(127);  // exec failed
}

}  // namespace

// What a child sent that does not decode. `who` (an implementation's label,
// or empty) leads the message.
Status isolate_detail::malformed_result(const std::string& who, const std::exception& e, size_t bytes) {
  return Status::error(ErrorKind::implementation, (who.empty() ? "" : who + ": ") +
                                                      "the isolated child sent a malformed result (" + e.what() +
                                                      ", " + std::to_string(bytes) + " bytes)");
}

namespace {

RunResult run_isolated(const Implementation& impl, const Case& c, const std::function<void(int)>& child,
                       double timeout_seconds) {
  std::vector<uint8_t> bytes;
  Status s = run_in_child(child, timeout_seconds, &bytes);
  if (!s.ok()) {
    s.message = impl.label() + " " + s.message;
    return empty_result(c, s);
  }
  try {
    return decode_run_result(bytes);
  } catch (const std::exception& e) {
    return empty_result(c, malformed_result(impl.label(), e, bytes.size()));
  }
}

// The same for a child that sends a Status.
Status status_from_child(const std::function<void(int)>& child, double timeout_seconds, const std::string& who) {
  std::vector<uint8_t> bytes;
  Status s = run_in_child(child, timeout_seconds, &bytes);
  if (!s.ok()) {
    if (!who.empty()) s.message = who + " " + s.message;
    return s;
  }
  try {
    return decode_status(bytes);
  } catch (const std::exception& e) {
    return malformed_result(who, e, bytes.size());
  }
}
}  // namespace

RunResult run_case_in_fresh_process(const Implementation& impl, const Case& c, const RunOptions& opt,
                                    double timeout_seconds) {
  const auto request = encode_request(impl, c, opt);
  return run_isolated(impl, c, [&](int fd) { exec_worker(request, fd); }, timeout_seconds);
}

// Implementations whose runtime does not survive fork(): CUDA (once
// initialised in the parent) and LibTorch (2.x refuses autograd in a forked
// child: "Unable to handle autograd's threading in combination with
// fork-based multiprocessing", seen with LibTorch 2.11).
// Python implementations too: their torch is LibTorch, and a forked copy of
// an interpreter whose other threads held locks may hang.
bool needs_fresh_process(const Implementation& impl) {
  return impl.device == Device::cuda || impl.name == "torch-eager" || impl.takes_tensors();
}

RunResult run_case_isolated(const Implementation& impl, const Case& c, const RunOptions& opt,
                            double timeout_seconds) {
  if (needs_fresh_process(impl)) return run_case_in_fresh_process(impl, c, opt, timeout_seconds);
  return run_isolated(
      impl, c, [&](int fd) { run_body([&] { return encode(run_case(impl, c, opt)); }, fd); }, timeout_seconds);
}

bool register_fresh_process_task(const std::string& name, FreshProcessTask task) {
  return fresh_process_tasks().emplace(name, task).second;
}

Status call_in_fresh_process(const std::string& task, const Implementation& impl, const Case& c, int64_t arg,
                             double timeout_seconds) {
  if (fresh_process_tasks().count(task) == 0) return unregistered_task(task);  // (saves a process)
  const auto request = encode_task_request(task, impl, c, arg);
  return status_from_child([&](int fd) { exec_worker(request, fd); }, timeout_seconds, impl.label());
}

Status call_isolated(const std::function<Status()>& call, double timeout_seconds) {
  return status_from_child([&](int fd) { run_body([&] { return encode(call()); }, fd); }, timeout_seconds, "");
}

}  // namespace gatecheck
