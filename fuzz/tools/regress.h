// gatecheck-fuzz-tools regress: a crash input from the fuzzer becomes JSON
// regression case(s), each shrunk and saved with its repro command.
#pragma once

#include <string>

namespace gatecheck::fuzz {

// Replays the input `input` on every configured implementation
// (target_config()), shrinks each claimed failure (budget shrink_seconds) and
// saves it under out_dir; prints one JSON line per failure on stdout. A call
// that crashes, exits or hangs is itself the failure: every call is first
// made in a child process (harness/isolate.h), so the replay survives it.
// Returns 0 when a failure was saved, 3 when the input fails nothing.
int regress_crash_input(const std::string& input, const std::string& out_dir, double shrink_seconds);

}  // namespace gatecheck::fuzz
