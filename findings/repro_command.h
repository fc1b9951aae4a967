// The one repro line of every saved failure (check, shrink, sweep, the fuzz
// targets and the nightly campaign): `./gatecheck repro FILE --impl SPEC`,
// quoted for a shell, with --device cuda where the implementation's name does
// not imply it, and --isolate where the failing call died (a crash, an exit,
// a hang: a plain replay would die of it too). repro reads the op from the
// file.
#pragma once

#include <string>

#include "../properties/checks/properties.h"

namespace gatecheck {

std::string repro_command(const std::string& case_file, const std::string& impl, Device d, bool isolate = false);
// --isolate when v's call died under isolation.
std::string repro_command(const std::string& case_file, const std::string& impl, Device d, const Verdict& v);
std::string shell_quote(const std::string& s);

}  // namespace gatecheck
