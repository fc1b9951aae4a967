// Turns --impl/--device/--claims into Implementations, with the CLI's exit
// codes: a bad name or list is a usage error (2); a plugin that will not load
// or a missing GPU means the implementation cannot run (3).
#pragma once

#include <string>
#include <vector>

#include "../properties/contract.h"

namespace gatecheck {

struct ImplArgsError {
  int exit_code;
  std::string message;
};

// Throws ImplArgsError.
std::vector<Subject> implementations_from_args(const std::vector<std::string>& specs,
                                                      const std::string& device,
                                                      const std::string& claims);

}  // namespace gatecheck
