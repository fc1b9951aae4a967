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
#include "../impls/plugin_stdout.h"

namespace gatecheck {

using namespace isolate_detail;

// ---- children kept from call to call --------------------------------------------
// A fork costs milliseconds in a process with LibTorch and CUDA mapped (1,500
// mappings to copy: 5-20 ms each, seen here), and blocks the other workers'
// page faults while it copies; a fresh process costs seconds where it starts
// Python, imports torch and initialises CUDA. So each thread keeps one child
// per implementation and sends it tasks over a socket: a length, then the
// request (encode_task_request); back comes a length and the reply
// (encode_reply). A child that dies or hangs is reaped, reported as
// run_in_child reports it, and started afresh at the next call. Two kinds:
// a plain fork (call_in_forked_worker), which ends with its socket or with
// the thread that forked it (PR_SET_PDEATHSIG); and this program re-executed
// (call_in_exec_worker), for what a fork cannot host, which waits idle for
// the next thread when its own ends, and dies with this process.

namespace {

bool send_all(int fd, const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  while (n > 0) {
    const ssize_t k = ::send(fd, b, n, MSG_NOSIGNAL);  // a dead child is an error here, not a SIGPIPE
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    b += k;
    n -= size_t(k);
  }
  return true;
}

// Reads n bytes, waiting until `deadline` at most: 1 done, 0 the other end
// closed (or failed), -1 timed out.
int recv_all(int fd, void* p, size_t n, std::chrono::steady_clock::time_point deadline) {
  auto* b = static_cast<uint8_t*>(p);
  while (n > 0) {
    // (rounded up: poll must not give up before the deadline)
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return -1;
    pollfd pfd{fd, POLLIN, 0};
    const int pr = ::poll(&pfd, 1, int(std::min<long long>(left, 1 << 30)));
    if (pr < 0 && errno == EINTR) continue;
    if (pr == 0) return -1;
    const ssize_t k = ::recv(fd, b, n, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return 0;
    b += k;
    n -= size_t(k);
  }
  return 1;
}

// A kept child's loop: run(request) for each request, until its socket
// closes; usable() after each says whether to go on.
[[noreturn]] void serve_requests(int fd, const std::function<Status(const Request&)>& run,
                                 const std::function<bool(const Request&)>& usable) {
  for (;;) {
    uint64_t n = 0;
    if (recv_all(fd, &n, sizeof n, std::chrono::steady_clock::time_point::max()) != 1) ::_exit(0);
    if (n > (uint64_t(1) << 34)) ::_exit(6);  // not a request of ours
    std::vector<uint8_t> request(n);
    if (recv_all(fd, request.data(), n, std::chrono::steady_clock::time_point::max()) != 1) ::_exit(0);
    Status s;
    bool go_on = false;
    try {
      const Request q = decode_request(request);
      s = run(q);
      go_on = usable(q);
    } catch (const std::exception& e) {
      s = Status::error(ErrorKind::implementation, e.what());
    }
    std::fflush(nullptr);
    const std::vector<uint8_t> reply = encode_reply(s, go_on);
    const uint64_t m = reply.size();
    if (!send_all(fd, &m, sizeof m) || !send_all(fd, reply.data(), reply.size())) ::_exit(0);
  }
}

// Idle fresh-process workers, by implementation: a check thread that ends
// (the engine's threads last one run, the bench's one row) leaves its worker
// here for the next thread, rather than have each one pay for a process start
// again. Ended at exit; each is healthy (see call_in_exec_worker).
class IdleWorkers {
 public:
  void put(const std::string& key, pid_t pid, int fd) {
    const std::lock_guard<std::mutex> lock(m_);
    idle_.emplace(key, std::make_pair(pid, fd));
  }
  // A live idle worker for key, or false.
  bool take(const std::string& key, pid_t* pid, int* fd) {
    const std::lock_guard<std::mutex> lock(m_);
    for (auto it = idle_.find(key); it != idle_.end() && it->first == key; it = idle_.erase(it)) {
      int st = 0;
      if (::waitpid(it->second.first, &st, WNOHANG) == 0) {  // still there
        *pid = it->second.first;
        *fd = it->second.second;
        idle_.erase(it);
        return true;
      }
      ::close(it->second.second);  // gone (killed from outside): reaped above
    }
    return false;
  }
  ~IdleWorkers() {
    for (auto& [key, w] : idle_) {
      ::kill(w.first, SIGKILL);
      ::close(w.second);
      while (::waitpid(w.first, nullptr, 0) < 0 && errno == EINTR) {
      }
    }
  }

 private:
  std::mutex m_;
  std::multimap<std::string, std::pair<pid_t, int>> idle_;
};

IdleWorkers& idle_workers() {
  static IdleWorkers w;
  return w;
}

struct KeptChild {
  pid_t pid = -1;
  int fd = -1;
  std::string idle_key;  // a fresh-process worker's: where it waits when its thread ends
  KeptChild() = default;
  KeptChild(const KeptChild&) = delete;
  KeptChild& operator=(const KeptChild&) = delete;
  ~KeptChild() {
    if (pid >= 0 && !idle_key.empty()) {
      idle_workers().put(idle_key, pid, fd);
      pid = -1;
    }
    end(true);
  }
  // Reaps the child, killing it first when `kill_it` (an idle one: a copy of
  // our end of its socket in another child would keep it from ever seeing
  // end-of-file); the wait status, or -1.
  int end(bool kill_it) {
    if (pid < 0) return -1;
    if (kill_it) ::kill(pid, SIGKILL);
    ::close(fd);
    int w = -1;
    while (::waitpid(pid, &w, 0) < 0 && errno == EINTR) {
    }
    pid = -1;
    fd = -1;
    return w;
  }
};

// This thread's children, one per kind and implementation (its name, device
// and, for a forked one, its table).
KeptChild& kept_child(const std::string& key) {
  thread_local std::map<std::string, std::unique_ptr<KeptChild>> m;
  auto& slot = m[key];
  if (!slot) slot = std::make_unique<KeptChild>();
  return *slot;
}

// Sends `request` to w's child and returns the Status it replies with, and in
// *usable whether it may serve again. A child that dies, sends a malformed
// reply or does not reply within timeout_seconds is reaped (killed first if
// it is still there) and reported as run_in_child reports it.
Status ask_kept_child(KeptChild& w, const std::vector<uint8_t>& request, double timeout_seconds,
                      const std::string& label, bool* usable) {
  *usable = false;
  const pid_t pid = w.pid;
  const uint64_t n = request.size();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                                std::chrono::duration<double>(timeout_seconds));
  uint64_t m = 0;
  std::vector<uint8_t> reply;
  int got = 0;
  if (send_all(w.fd, &n, sizeof n) && send_all(w.fd, request.data(), request.size())) {
    got = recv_all(w.fd, &m, sizeof m, deadline);
    if (got == 1) {
      if (m > (1u << 30)) {
        got = 0;
      } else {
        reply.resize(m);
        got = recv_all(w.fd, reply.data(), m, deadline);
      }
    }
  }
  if (got == 1) {
    try {
      return decode_reply(reply, usable);
    } catch (const std::exception& e) {
      w.end(true);
      return malformed_result(label, e, reply.size());
    }
  }
  const int ws = w.end(/*kill_it=*/got == -1 || got == 1);
  const std::string who = label + " ";
  char secs[32];
  std::snprintf(secs, sizeof secs, "%g", timeout_seconds);
  if (got == -1)
    return Status::error(ErrorKind::implementation, who + "hung: no result within " + secs +
                                                        " s; the isolated child (pid " + std::to_string(pid) + ") was killed");
  if (ws != -1 && WIFSIGNALED(ws))
    return Status::error(ErrorKind::implementation, who + "crashed: the isolated child (pid " + std::to_string(pid) +
                                                        ") was killed by " + signal_name(WTERMSIG(ws)));
  return Status::error(ErrorKind::implementation,
                       who + "exited: the isolated child (pid " + std::to_string(pid) + ") exited with status " +
                           std::to_string(ws != -1 && WIFEXITED(ws) ? WEXITSTATUS(ws) : -1) + " before returning a result");
}

Status start_forked_worker(const Implementation& impl, KeptChild* w) {
  int sv[2];
  flush_stdout_streams();
  std::fflush(nullptr);
  std::unique_lock<std::mutex> forking(g_forking);
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return Status::error(ErrorKind::implementation, std::string("isolate: socketpair failed: ") + std::strerror(errno));
  const pid_t parent = ::getpid();
  const pid_t pid = fork_paused();
  if (pid < 0) return fork_failed(sv);
  if (pid == 0) {
    ::close(sv[0]);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // with the thread that forked it
    if (::getppid() != parent) ::_exit(0);
    serve_requests(
        sv[1], [&](const Request& q) { return run_task(q, impl); }, [](const Request&) { return true; });
  }
  ::close(sv[1]);
  forking.unlock();
  w->pid = pid;
  w->fd = sv[0];
  return Status::success();
}

// ---- the worker kept in a fresh process ----
// Re-executing this program costs what a fresh process costs (for Python on
// CUDA: start Python, import torch, initialise CUDA; seconds), so the worker
// is kept as the forked one is. But a CUDA error such as a device-side assert
// is sticky: the context that saw it fails every later call, and a worker
// kept after one would fail the probes of later cases that are not to blame.
// So a worker serves another request only if (1) every part of its last one
// succeeded (the task returned success: for error_inputs, every probe was
// rejected as documented, each checked with a synchronise of its stream)
// and (2) for a CUDA implementation, the device then synchronises with no
// error, sticky or pending (a sticky error is returned by every later call,
// so none escapes this check). Anything else retires it, and the next call
// starts a new one. GATECHECK_ISOLATE_KEEP_WORKERS=0 starts one a call.

bool keep_exec_workers() {
  const char* v = std::getenv("GATECHECK_ISOLATE_KEEP_WORKERS");
  return !(v && std::strcmp(v, "0") == 0);
}

// May this process's CUDA context serve another request?
bool cuda_still_usable() {
  cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess) e = cudaGetLastError();
  return e == cudaSuccess;
}

}  // namespace

[[noreturn]] void isolate_detail::serve_exec_worker(int fd) {
  std::map<std::string, Implementation> impls;  // each made once, from its spec
  serve_requests(
      fd,
      [&](const Request& q) {
        if (fresh_process_tasks().count(q.task) == 0) return unregistered_task(q.task);
        const std::string key = q.spec + "@" + device_name(q.device) + " " + q.c.op->name;
        auto it = impls.find(key);
        if (it == impls.end()) it = impls.emplace(key, make_implementation(q.spec, q.device, *q.c.op)).first;
        return run_task(q, it->second);
      },
      [](const Request& q) { return q.device != Device::cuda || cuda_still_usable(); });
}

namespace {

// Runs fn on a thread that lasts as long as this process, started at first
// use. PR_SET_PDEATHSIG follows the thread that forked, not the process: a
// worker forked from there dies with the process, and outlives the check
// thread that asked for it (to serve the next one, from IdleWorkers).
void on_lasting_thread(const std::function<void()>& fn) {
  struct Lasting {
    pid_t owner = -1;
    std::mutex m;
    std::condition_variable cv;
    const std::function<void()>* job = nullptr;
    bool done = false;
  };
  static std::mutex making;
  static Lasting* lasting = nullptr;  // never freed: its thread runs until the process ends
  Lasting* l = nullptr;
  {
    const std::lock_guard<std::mutex> lock(making);
    if (!lasting || lasting->owner != ::getpid()) {  // (a forked copy of this process has no such thread)
      lasting = new Lasting;
      lasting->owner = ::getpid();
      std::thread([l = lasting] {
        std::unique_lock<std::mutex> lock(l->m);
        for (;;) {
          l->cv.wait(lock, [&] { return l->job && !l->done; });
          (*l->job)();
          l->done = true;
          l->cv.notify_all();
        }
      }).detach();
    }
    l = lasting;
  }
  std::unique_lock<std::mutex> lock(l->m);
  l->cv.wait(lock, [&] { return l->job == nullptr; });
  l->job = &fn;
  l->done = false;
  l->cv.notify_all();
  l->cv.wait(lock, [&] { return l->done; });
  l->job = nullptr;
  l->cv.notify_all();
}

Status fork_exec_worker(KeptChild* w);

Status start_exec_worker(KeptChild* w) {
  Status started;
  on_lasting_thread([&] { started = fork_exec_worker(w); });
  return started;
}

Status fork_exec_worker(KeptChild* w) {
  std::unique_lock<std::mutex> forking(g_forking);
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return Status::error(ErrorKind::implementation, std::string("isolate: socketpair failed: ") + std::strerror(errno));
  // All the child needs, made before the fork: between fork and exec the
  // child of a threaded process may make async-signal-safe calls only.
  std::string worker;
  std::vector<char*> env = worker_environment(kKeptWorkerPrefix + std::to_string(sv[1]), &worker);
  char self[] = "/proc/self/exe";
  char* argv[] = {self, nullptr};
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return fork_failed(sv);
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // with the lasting thread, so with this process; kept across exec
    if (::getppid() != parent) ::_exit(0);
    // Ctrl-C and a SIGTERM to the group reach the worker too; the parent
    // stops after the call in hand and then ends its workers, so the worker
    // must not die under that call (ignored stays ignored across exec).
    ::sigaction(SIGINT, &ignore, nullptr);
    ::sigaction(SIGTERM, &ignore, nullptr);
    ::fcntl(sv[1], F_SETFD, 0);  // the worker's end stays open across exec
    ::execve(self, argv, env.data());
    ::_exit(127);
  }
  ::close(sv[1]);
  forking.unlock();
  w->pid = pid;
  w->fd = sv[0];
  return Status::success();
}

}  // namespace

Status call_in_forked_worker(const std::string& task, const Implementation& impl, const Case& c, int64_t arg,
                             double timeout_seconds) {
  if (fresh_process_tasks().count(task) == 0) return unregistered_task(task);
  KeptChild& w = kept_child("fork " + impl.label() + " " + impl.op->name + "#" +
                            std::to_string(reinterpret_cast<uintptr_t>(impl.call_lock_key())));
  if (w.pid < 0)
    if (Status s = start_forked_worker(impl, &w); !s.ok()) return s;
  bool usable = false;
  return ask_kept_child(w, encode_task_request(task, impl, c, arg), timeout_seconds, impl.label(), &usable);
}

Status call_in_exec_worker(const std::string& task, const Implementation& impl, const Case& c, int64_t arg,
                           double timeout_seconds) {
  if (!keep_exec_workers()) return call_in_fresh_process(task, impl, c, arg, timeout_seconds);
  if (fresh_process_tasks().count(task) == 0) return unregistered_task(task);
  const std::string key = impl.label() + " " + impl.op->name;
  KeptChild& w = kept_child("exec " + key);
  w.idle_key = key;
  if (w.pid < 0 && !idle_workers().take(key, &w.pid, &w.fd))
    if (Status s = start_exec_worker(&w); !s.ok()) return s;
  bool usable = false;
  const Status s = ask_kept_child(w, encode_task_request(task, impl, c, arg), timeout_seconds, impl.label(), &usable);
  if (!s.ok() || !usable) w.end(/*kill_it=*/true);  // retired: see above
  return s;
}

}  // namespace gatecheck
