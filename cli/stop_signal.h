// Ctrl-C (SIGINT), SIGTERM and SIGHUP stop a run gracefully: the first one asks the
// run to stop after the case in hand, so that what it found is still shrunk
// (as far as it got), saved and reported; another one a second or more later
// ends the process at once, as the default action would. While an
// implementation loads (crash_guard.h's LoadWatch) the first one ends it at
// once: a load has no case to finish, and a hung one would never stop.
#pragma once

namespace gatecheck {

// Installs the handlers for SIGINT, SIGTERM and SIGHUP (once). Forked children
// (--isolate) inherit them and finish their call.
void install_stop_handlers();
// 0, or the signal that asked the run to stop.
int stop_signal();
// Has one? (The stop predicate of CheckOptions and shrink_case.)
bool stop_requested();
// "interrupted by SIGINT" (or SIGTERM, SIGHUP), as the report says it.
const char* stop_words();
// The same for a given stop signal.
const char* stop_words_for(int sig);
// The exit status of a run so stopped: 128 + the signal (130, 143, 129), as the
// shell reports a death by it.
int stop_exit_code();

}  // namespace gatecheck
