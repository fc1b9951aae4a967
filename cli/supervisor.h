// Some deaths no handler of the process itself sees: SIGKILL (the OOM killer,
// a job's time limit, kill -9) and _exit() inside an implementation. The case
// in flight is on disk, but nothing would say so, and the exit status would be
// the implementation's (an _exit(0) reads as a pass). So gatecheck runs as two
// processes: this one forks, the child runs the command, and the parent waits,
// forwards the signals a user or a scheduler sends it (SIGINT, SIGTERM, SIGHUP,
// SIGQUIT, SIGUSR1, SIGUSR2), and ends as the child did. Where the child died
// during a call without saying why (crash_guard.h), the parent prints that
// call's message (the case file and the repro command) and exits 3 (a signal:
// it dies of the same signal).
//
// Not supervised: under a debugger or tracer (it would follow the wrong
// process), and with GATECHECK_SUPERVISOR=0 in the environment.
#pragma once

namespace gatecheck {

// Returns in the child (or at once, unsupervised); the parent never returns.
void run_supervised();

}  // namespace gatecheck
