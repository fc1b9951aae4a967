// Crash safety for the CLI: the case under test is on disk before an
// implementation runs it, and a fatal signal prints which file holds it and
// how to replay it, then dies with the original signal.
#pragma once

#include <string>

namespace gatecheck {

// Installs handlers for SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT (once).
void install_crash_guard();
// The message a crash prints from now on ("" clears it). Copied into a
// static buffer here, so the handler itself only calls write().
void set_crash_message(const std::string& message);

}  // namespace gatecheck
