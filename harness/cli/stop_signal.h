// Ctrl-C (SIGINT) and SIGTERM stop a run gracefully: the first one asks the
// run to stop after the case in hand, so that what it found is still shrunk
// (as far as it got), saved and reported; another one a second or more later
// ends the process at once, as the default action would.
#pragma once

namespace gatecheck {

// Installs the handlers for SIGINT and SIGTERM (once). Forked children
// (--isolate) inherit them and finish their call.
void install_stop_handlers();
// 0, or the signal that asked the run to stop.
int stop_signal();

}  // namespace gatecheck
