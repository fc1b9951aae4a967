// Crash isolation (`--isolate`): run one call of an implementation in a forked
// child process, so that a plugin that segfaults, aborts, exits or hangs
// becomes a reported failure instead of a dead run.
//
// The child runs the call and streams its result back over a pipe; the parent
// turns a signal, an abnormal exit or a timeout into Status kind
// `implementation` with a message naming what happened ("killed by SIGSEGV
// (Segmentation fault)", "hung: no result within 5 s, killed").
//
// CUDA: the child initialises CUDA itself, which works only if the parent has
// not initialised CUDA before fork() (the CUDA driver does not survive a
// fork). A parent that wants to isolate CUDA calls must therefore not touch
// CUDA itself (no cudaMalloc, no kernel, no cudaGetDeviceCount) before the
// isolated calls; if it has, the child's calls fail with a CUDA
// initialisation error, reported as the call's error.
#pragma once

#include <functional>

#include "runner.h"

namespace gatecheck {

// The default limit for one isolated call.
constexpr double kDefaultIsolateTimeoutSeconds = 60.0;

// run_case(impl, c, opt) in a child process. On a normal return the result is
// the child's RunResult, bit for bit. On a crash, an abnormal exit or a
// timeout, status is ErrorKind::implementation with the reason, the outputs
// are shaped like the case's (zeros) and there are no memory findings.
RunResult run_case_isolated(const Implementation& impl, const Case& c, const RunOptions& opt = {},
                            double timeout_seconds = kDefaultIsolateTimeoutSeconds);

// Any call that returns a Status, in a child process, with the same handling
// of crashes and timeouts (used e.g. to feed bad input to an implementation
// that may crash on it).
Status call_isolated(const std::function<Status()>& call,
                     double timeout_seconds = kDefaultIsolateTimeoutSeconds);

}  // namespace gatecheck
