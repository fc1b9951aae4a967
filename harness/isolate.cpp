#include "isolate.h"

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

#include "plugin_call_lock.h"
#include "plugin_stdout.h"

// false unless the program defines it (isolate.h).
extern "C" {
__attribute__((weak)) bool gatecheck_isolate_worker_in_main = false;
}

namespace gatecheck {

namespace {

// ---- a small binary encoding for what comes back over the pipe -------------
// Fixed-width little-endian integers and length-prefixed bytes; the reader
// checks every length, so a child that dies mid-write is seen as truncated.

constexpr uint32_t kMagic = 0x31524347;  // "GCR1"

class Writer {
 public:
  void u32(uint32_t v) { raw(&v, sizeof v); }
  void i64(int64_t v) { raw(&v, sizeof v); }
  void bytes(const void* p, size_t n) {
    i64(int64_t(n));
    raw(p, n);
  }
  void str(const std::string& s) { bytes(s.data(), s.size()); }
  void tensor(const HostTensor& t) {
    u32(uint32_t(t.dtype));
    i64(t.rows);
    i64(t.cols);
    bytes(t.bytes.data(), t.bytes.size());
  }
  void status(const Status& s) {
    u32(uint32_t(s.kind));
    str(s.message);
  }
  std::vector<uint8_t> buf;

 private:
  void raw(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    buf.insert(buf.end(), b, b + n);
  }
};

class Reader {
 public:
  explicit Reader(const std::vector<uint8_t>& b) : b_(b) {}
  uint32_t u32() { uint32_t v; raw(&v, sizeof v); return v; }
  int64_t i64() { int64_t v; raw(&v, sizeof v); return v; }
  std::vector<uint8_t> bytes() {
    const int64_t n = i64();
    if (n < 0 || size_t(n) > b_.size() - pos_) throw std::runtime_error("truncated result");
    std::vector<uint8_t> v(b_.begin() + long(pos_), b_.begin() + long(pos_ + size_t(n)));
    pos_ += size_t(n);
    return v;
  }
  std::string str() {
    const auto v = bytes();
    return std::string(v.begin(), v.end());
  }
  HostTensor tensor() {
    HostTensor t;
    t.dtype = DType(u32());
    t.rows = i64();
    t.cols = i64();
    t.bytes = bytes();
    return t;
  }
  Status status() {
    const uint32_t k = u32();
    if (k > uint32_t(ErrorKind::implementation)) throw std::runtime_error("bad error kind");
    Status s;
    s.kind = ErrorKind(k);
    s.message = str();
    return s;
  }
  bool done() const { return pos_ == b_.size(); }

 private:
  void raw(void* p, size_t n) {
    if (n > b_.size() - pos_) throw std::runtime_error("truncated result");
    std::memcpy(p, b_.data() + pos_, n);
    pos_ += n;
  }
  const std::vector<uint8_t>& b_;
  size_t pos_ = 0;
};

std::vector<uint8_t> encode(const RunResult& r) {
  Writer w;
  w.u32(kMagic);
  w.status(r.status);
  for (const HostTensor* t : {&r.outputs.out, &r.outputs.grad_res, &r.outputs.grad_y, &r.outputs.grad_gate})
    w.tensor(*t);
  w.i64(int64_t(r.memory.size()));
  for (const auto& m : r.memory) {
    w.u32(uint32_t(m.kind));
    w.str(m.tensor);
    w.i64(m.first);
    w.i64(m.count);
    w.str(m.detail);
  }
  return w.buf;
}

RunResult decode_run_result(const std::vector<uint8_t>& b) {
  Reader rd(b);
  if (rd.u32() != kMagic) throw std::runtime_error("bad magic");
  RunResult r;
  r.status = rd.status();
  for (HostTensor* t : {&r.outputs.out, &r.outputs.grad_res, &r.outputs.grad_y, &r.outputs.grad_gate})
    *t = rd.tensor();
  const int64_t n = rd.i64();
  if (n < 0 || n > 1000000) throw std::runtime_error("bad finding count");
  for (int64_t i = 0; i < n; ++i) {
    MemoryFinding m;
    const uint32_t k = rd.u32();
    if (k > MemoryFinding::oob_write) throw std::runtime_error("bad finding kind");
    m.kind = MemoryFinding::Kind(k);
    m.tensor = rd.str();
    m.first = rd.i64();
    m.count = rd.i64();
    m.detail = rd.str();
    r.memory.push_back(std::move(m));
  }
  if (!rd.done()) throw std::runtime_error("trailing bytes");
  return r;
}

std::vector<uint8_t> encode(const Status& s) {
  Writer w;
  w.u32(kMagic);
  w.status(s);
  return w.buf;
}

Status decode_status(const std::vector<uint8_t>& b) {
  Reader rd(b);
  if (rd.u32() != kMagic) throw std::runtime_error("bad magic");
  Status s = rd.status();
  if (!rd.done()) throw std::runtime_error("trailing bytes");
  return s;
}

// ---- the child process ------------------------------------------------------

bool write_all(int fd, const std::vector<uint8_t>& b) {
  size_t off = 0;
  while (off < b.size()) {
    const ssize_t n = ::write(fd, b.data() + off, b.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += size_t(n);
  }
  return true;
}

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  const char* what = strsignal(sig);
  std::string s = abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
  if (what) s += std::string(" (") + what + ")";
  return s;
}

// Forks; the child runs child(result_fd) (which must not return) and the
// parent collects what it writes to result_fd, or a Status saying why there
// is nothing (crash, exit, timeout).
// Held from a child's pipe or socket being made until the parent has closed
// the child's end: so no other thread's fork copies that end into a child of
// its own, where it would keep the pipe from ever reaching end-of-file (a
// child kept from call to call lives long).
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
  auto ms_left = [&] {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
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

// ---- a fresh process for CUDA -------------------------------------------------
// A forked child cannot use CUDA once the parent has initialised it, and a
// parent has always done so by the time it runs a CUDA implementation
// (cudaGetDeviceCount alone is enough). So for CUDA the child re-executes
// this program (/proc/self/exe) with GATECHECK_ISOLATE_WORKER set; the hook
// below sees it before main(), runs the request it finds in an inherited
// memfd, and writes the result to an inherited pipe. The implementation is
// rebuilt from its spec (make_implementation), so this works for every
// implementation the registry can make.

constexpr const char* kWorkerEnv = "GATECHECK_ISOLATE_WORKER";

void write_case(Writer& w, const Case& c) {
  w.u32(uint32_t(c.dtype));
  w.i64(c.rows);
  w.i64(c.dim);
  w.i64(c.gates);
  w.bytes(c.index.data(), c.index.size() * sizeof(int64_t));
  for (const HostTensor* t : {&c.res, &c.gate, &c.y, &c.grad_out}) w.tensor(*t);
}

Case read_case(Reader& rd) {
  Case c;
  c.dtype = DType(rd.u32());
  c.rows = rd.i64();
  c.dim = rd.i64();
  c.gates = rd.i64();
  const auto index = rd.bytes();
  c.index.resize(index.size() / sizeof(int64_t));
  if (!index.empty()) std::memcpy(c.index.data(), index.data(), index.size());
  for (HostTensor* t : {&c.res, &c.gate, &c.y, &c.grad_out}) *t = rd.tensor();
  return c;
}

// Two requests: run_case (kMagic) or a named task (kTaskMagic).
constexpr uint32_t kTaskMagic = 0x31544347;  // "GCT1"

std::vector<uint8_t> encode_request(const Implementation& impl, const Case& c, const RunOptions& opt) {
  Writer w;
  w.u32(kMagic);
  w.str(impl.name);
  w.u32(uint32_t(impl.device));
  w.u32(uint32_t(opt.poison));
  w.u32(uint32_t(opt.forward) | uint32_t(opt.backward) << 1);
  write_case(w, c);
  return w.buf;
}

std::vector<uint8_t> encode_task_request(const std::string& task, const Implementation& impl, const Case& c,
                                         int64_t arg) {
  Writer w;
  w.u32(kTaskMagic);
  w.str(task);
  w.str(impl.name);
  w.u32(uint32_t(impl.device));
  w.i64(arg);
  write_case(w, c);
  return w.buf;
}

struct Request {
  std::string task;  // empty: run_case
  std::string spec;
  Device device = Device::cpu;
  RunOptions opt;
  int64_t arg = 0;
  Case c;
};

Request decode_request(const std::vector<uint8_t>& b) {
  Reader rd(b);
  Request q;
  const uint32_t magic = rd.u32();
  if (magic == kTaskMagic) {
    q.task = rd.str();
    q.spec = rd.str();
    q.device = Device(rd.u32());
    q.arg = rd.i64();
    q.c = read_case(rd);
    return q;
  }
  if (magic != kMagic) throw std::runtime_error("bad magic");
  q.spec = rd.str();
  q.device = Device(rd.u32());
  q.opt.poison = int(rd.u32());
  const uint32_t which = rd.u32();
  q.opt.forward = which & 1u;
  q.opt.backward = (which & 2u) != 0;
  q.c = read_case(rd);
  return q;
}

// Tasks by name; a function-local static, so registrars at static
// initialisation may run in any order.
std::map<std::string, FreshProcessTask>& fresh_process_tasks() {
  static std::map<std::string, FreshProcessTask> tasks;
  return tasks;
}

Status unregistered_task(const std::string& task) {
  return Status::error(ErrorKind::implementation, "isolate: task '" + task + "' is not registered in this program");
}

// What kWorkerEnv holds for a worker kept from call to call
// (call_in_exec_worker): this prefix and its socket's descriptor.
constexpr const char* kKeptWorkerPrefix = "kept:";
[[noreturn]] void serve_exec_worker(int fd);

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
                                                    : task->second(make_implementation(q.spec, q.device), q.c, q.arg);
          } catch (const std::exception& e) {
            s = Status::error(ErrorKind::implementation, e.what());
          }
          return encode(s);
        }
        RunResult r;
        try {
          r = run_case(make_implementation(q.spec, q.device), q.c, q.opt);
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

void run_isolate_worker_if_requested() {
  if (const char* fds = std::getenv(kWorkerEnv)) worker_main(fds);
}

namespace {

// The environment for execve of a worker: this process's, with kWorkerEnv
// set to `value` in `entry` (which must outlive the result). Passed to execve
// rather than set: setenv() takes a lock that another thread of the parent
// may have held at a fork.
std::vector<char*> worker_environment(const std::string& value, std::string* entry) {
  const std::string prefix = std::string(kWorkerEnv) + "=";
  *entry = prefix + value;
  std::vector<char*> env;
  for (char** e = environ; e && *e; ++e)
    if (std::strncmp(*e, prefix.c_str(), prefix.size()) != 0) env.push_back(*e);
  env.push_back(const_cast<char*>(entry->c_str()));
  env.push_back(nullptr);
  return env;
}

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

namespace {
// What a child sent that does not decode. `who` (an implementation's label,
// or empty) leads the message.
Status malformed_result(const std::string& who, const std::exception& e, size_t bytes) {
  return Status::error(ErrorKind::implementation, (who.empty() ? "" : who + ": ") +
                                                      "the isolated child sent a malformed result (" + e.what() +
                                                      ", " + std::to_string(bytes) + " bytes)");
}

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
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
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

// A kept child's reply: the task's Status, and whether the child may serve
// another request.
std::vector<uint8_t> encode_reply(const Status& s, bool usable) {
  Writer w;
  w.u32(kMagic);
  w.status(s);
  w.u32(usable ? 1 : 0);
  return w.buf;
}

Status decode_reply(const std::vector<uint8_t>& b, bool* usable) {
  Reader rd(b);
  if (rd.u32() != kMagic) throw std::runtime_error("bad magic");
  Status s = rd.status();
  *usable = rd.u32() == 1;
  if (!rd.done()) throw std::runtime_error("trailing bytes");
  return s;
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

Status run_task(const Request& q, const Implementation& impl) {
  const auto task = fresh_process_tasks().find(q.task);
  return task == fresh_process_tasks().end() ? unregistered_task(q.task) : task->second(impl, q.c, q.arg);
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

[[noreturn]] void serve_exec_worker(int fd) {
  std::map<std::string, Implementation> impls;  // each made once, from its spec
  serve_requests(
      fd,
      [&](const Request& q) {
        if (fresh_process_tasks().count(q.task) == 0) return unregistered_task(q.task);
        const std::string key = q.spec + "@" + device_name(q.device);
        auto it = impls.find(key);
        if (it == impls.end()) it = impls.emplace(key, make_implementation(q.spec, q.device)).first;
        return run_task(q, it->second);
      },
      [](const Request& q) { return q.device != Device::cuda || cuda_still_usable(); });
}

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
  KeptChild& w = kept_child("fork " + impl.name + "@" + device_name(impl.device) + "#" +
                            std::to_string(reinterpret_cast<uintptr_t>(impl.api)));
  if (w.pid < 0)
    if (Status s = start_forked_worker(impl, &w); !s.ok()) return s;
  bool usable = false;
  return ask_kept_child(w, encode_task_request(task, impl, c, arg), timeout_seconds, impl.label(), &usable);
}

Status call_in_exec_worker(const std::string& task, const Implementation& impl, const Case& c, int64_t arg,
                           double timeout_seconds) {
  if (!keep_exec_workers()) return call_in_fresh_process(task, impl, c, arg, timeout_seconds);
  if (fresh_process_tasks().count(task) == 0) return unregistered_task(task);
  const std::string key = impl.name + "@" + device_name(impl.device);
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
