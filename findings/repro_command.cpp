#include "repro_command.h"

#include "../harness/isolate/isolate.h"

namespace gatecheck {

std::string shell_quote(const std::string& s) {
  // Quoted unless every character is one no shell treats specially: "run(1)" or "a;b" in a
  // corpus path would break the printed command.
  const bool plain = !s.empty() && s.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                         "0123456789_./:=,+-@%") == std::string::npos;
  if (plain) return s;
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

std::string repro_command(const std::string& case_file, const std::string& impl, Device d, bool isolate) {
  std::string cmd = "./gatecheck repro " + shell_quote(case_file) + " --impl " + shell_quote(impl);
  if (d == Device::cuda && impl != "cuda") cmd += " --device cuda";
  return cmd + (isolate ? " --isolate" : "");
}

std::string repro_command(const std::string& case_file, const std::string& impl, Device d, const Verdict& v) {
  return repro_command(case_file, impl, d, isolated_call_died(v.message));
}

}  // namespace gatecheck
