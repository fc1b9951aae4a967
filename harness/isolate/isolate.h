// Crash isolation (`--isolate`): run one call of an implementation in a forked
// child process, so that a plugin that segfaults, aborts, exits or hangs
// becomes a reported failure instead of a dead run.
//
// The child runs the call and streams its result back over a pipe; the parent
// turns a signal, an abnormal exit or a timeout into Status kind
// `implementation` with a message naming what happened ("killed by SIGSEGV
// (Segmentation fault)", "hung: no result within 5 s, killed").
//
// Two kinds of child:
//  - host and plugins on the CPU run in a plain fork() of the caller: cheap,
//    and the call sees exactly the caller's loaded implementation. (A plugin
//    with its own OpenMP pool may hang in a forked child; that is reported as
//    "hung" at the timeout.)
//  - CUDA implementations and torch-eager run in a fresh process: the child
//    re-executes this program, which picks up the request before main() (a
//    hook in isolate.cpp) and rebuilds the implementation from its spec. A
//    plain fork cannot use CUDA once the parent has initialised it, and asking
//    whether a GPU exists (cudaGetDeviceCount) already does that ("CUDA error
//    in cudaMalloc: initialization error" in the child, seen on an H200);
//    LibTorch 2.x refuses autograd in a forked child.
#pragma once

#include <functional>
#include <string>

#include "../run/runner.h"

// A program whose fresh-process children must see every static initialiser
// run (ours: the CUDA runtime registers the kernels of kernels/cuda in one)
// defines this as true and calls run_isolate_worker_if_requested() first
// thing in main(). Elsewhere the worker runs before main(), from a static
// initialiser in isolate.cpp. Found on the H200: with the worker at static
// initialisation, `gatecheck check --impl cuda --isolate` failed every call.
extern "C" bool gatecheck_isolate_worker_in_main;

namespace gatecheck {

// In a fresh-process child: run the request and exit. Otherwise returns.
void run_isolate_worker_if_requested();

// Every Status of a call that died in isolation (crashed, hung, exited, or
// sent no result) says this, and messages that quote it keep it.
constexpr const char* kIsolatedChildWords = "the isolated child";
inline bool isolated_call_died(const std::string& message) {
  return message.find(kIsolatedChildWords) != std::string::npos;
}

// The default limit for one isolated call.
constexpr double kDefaultIsolateTimeoutSeconds = 60.0;

// run_case(impl, c, opt) in a child process. On a normal return the result is
// the child's RunResult, bit for bit. On a crash, an abnormal exit or a
// timeout, status is ErrorKind::implementation with the reason, the outputs
// are shaped like the case's (zeros) and there are no memory findings.
RunResult run_case_isolated(const Implementation& impl, const Case& c, const RunOptions& opt = {},
                            double timeout_seconds = kDefaultIsolateTimeoutSeconds);

// The fresh-process child of the above, for any implementation
// (run_case_isolated uses it for cuda and torch-eager). The implementation must be one make_implementation can
// rebuild from impl.name and impl.device.
RunResult run_case_in_fresh_process(const Implementation& impl, const Case& c, const RunOptions& opt = {},
                                    double timeout_seconds = kDefaultIsolateTimeoutSeconds);

// Does impl need a fresh process (not a fork) to run in a child? CUDA,
// torch-eager and Python implementations do (see the top of this file).
bool needs_fresh_process(const Implementation& impl);

// A named task for a fresh-process child: work on an implementation that a
// fork cannot host, such as error_inputs' bad-input probes on CUDA. The child
// is this program re-executed, so the task must be registered at static
// initialisation, with a registrar object of priority kFreshProcessTaskPriority
// (`__attribute__((init_priority(...)))`): before the hook that runs the
// worker in programs that do not run it from main(). `arg` is the caller's.
using FreshProcessTask = Status (*)(const Implementation& impl, const Case& c, int64_t arg);
constexpr int kFreshProcessTaskPriority = 1000;
bool register_fresh_process_task(const std::string& name, FreshProcessTask task);

// Runs task(impl, c, arg) in a fresh process and returns its Status; a
// crash, an abnormal exit or a timeout as run_case_isolated reports them. The
// implementation must be one make_implementation can rebuild.
Status call_in_fresh_process(const std::string& task, const Implementation& impl, const Case& c, int64_t arg,
                             double timeout_seconds = kDefaultIsolateTimeoutSeconds);

// A registered task (as for call_in_fresh_process) in a forked child that
// this thread keeps for `impl` from call to call, so that a run of calls
// pays for one fork. A crash, an abnormal exit or a timeout is reported as
// run_case_isolated reports it, and the next call forks a new child. A plain
// fork: the task must not use CUDA (for those, call_in_fresh_process).
Status call_in_forked_worker(const std::string& task, const Implementation& impl, const Case& c, int64_t arg,
                             double timeout_seconds = kDefaultIsolateTimeoutSeconds);

// The same in a fresh process (this program re-executed, as for
// call_in_fresh_process) that this thread keeps for the implementation (its
// name and device) from call to call, so that a run of calls pays for one
// process start (for Python on CUDA: Python, torch and CUDA, seconds). A
// crash, an abnormal exit or a timeout is reported as run_case_isolated
// reports it. The worker is retired, and the next call starts a new one, after
// any call whose task did not return success, and for a CUDA implementation
// after any call that left the device unable to synchronise (a device-side
// assert is sticky: nothing on that device runs again in the process), so
// that a poisoned worker never answers a later call. When its thread ends,
// a healthy worker waits for the next thread that calls for the same
// implementation (the engine starts new threads each run, the bench each
// row). It ignores SIGINT and SIGTERM (the caller stops its run, then ends
// it); idle ones are ended at exit, and every one dies with this process
// (PR_SET_PDEATHSIG, and end-of-file on its socket).
// GATECHECK_ISOLATE_KEEP_WORKERS=0 in the environment makes this
// call_in_fresh_process: a process a call.
Status call_in_exec_worker(const std::string& task, const Implementation& impl, const Case& c, int64_t arg,
                           double timeout_seconds = kDefaultIsolateTimeoutSeconds);

// Any call that returns a Status, in a child process, with the same handling
// of crashes and timeouts (used e.g. to feed bad input to an implementation
// that may crash on it). A plain fork: the call must not use CUDA.
Status call_isolated(const std::function<Status()>& call,
                     double timeout_seconds = kDefaultIsolateTimeoutSeconds);

}  // namespace gatecheck
