// Turns --impl/--device/--claims/--valid into Implementations, with the CLI's
// exit codes: a bad name, list or declared contract is a usage error (2); a
// plugin that will not load, a Python target that will not import, or a
// missing GPU means the implementation cannot run (3).
#pragma once

#include <string>
#include <vector>

#include "../properties/catalog/contract.h"

namespace gatecheck {

struct ImplArgsError {
  int exit_code;
  std::string message;
};

// "--impl SPEC is given twice" for the first spec given twice, or "": one
// implementation run twice would print two rows of the same verdicts and
// double the run's time.
std::string repeated_impl_problem(const std::vector<std::string>& specs);

// Throws ImplArgsError. Implementations of `op` (--op: an unknown name is a
// usage error); `claims` (--claims) replaces every contract; `valid`
// (--valid) narrows every contract's valid inputs. The loads run under a
// LoadWatch (crash_guard.h): `load_timeout` seconds (--load-timeout; 0: no
// limit) before the process ends as hung, naming the spec that was loading.
std::vector<Subject> implementations_from_args(const std::vector<std::string>& specs, const std::string& device,
                                               const std::string& claims, const std::string& valid,
                                               const std::string& op, double load_timeout);

}  // namespace gatecheck
