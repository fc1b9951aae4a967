// What a fuzz target (fuzz_OP) runs on one decoded Case: every property the
// implementation claims for the case's dtype (check_property), and the error
// magnitudes that feed the fuzzer's features.
#pragma once

#include <string>
#include <vector>

#include "../harness/impls/implementation.h"
#include "../case/case.h"
#include "../properties/checks/properties.h"

namespace gatecheck::fuzz {

struct FuzzFailure {
  Verdict verdict;
  std::string signature;  // property|impl|outputs: failures are de-duplicated on it
};

// Properties run per case: the comma-separated list in
// GATECHECK_FUZZ_PROPERTIES, else the default set without error_inputs
// (a fixed suite of bad inputs, probed in a child process: it belongs to
// `gatecheck check`, not to a loop of thousands of executions per second).
std::vector<std::string> fuzz_properties();

// "" if `properties` is not empty and every name in it is a property
// (all_properties()), else a message naming GATECHECK_FUZZ_PROPERTIES and,
// for an unknown name, that name and the valid ones. The fuzzer exits on it; nightly.sh asks before its workers start.
std::string fuzz_properties_problem(const std::vector<std::string>& properties);

// Runs `properties` on impl for c; returns the failures that break a claim.
// opt.isolate runs every call of impl in a child process (a crash becomes a
// failure; `gatecheck-fuzz-tools regress` replays crash inputs that way).
std::vector<FuzzFailure> check_claims(const Subject& impl, const Case& c,
                                      const std::vector<std::string>& properties,
                                      const PropertyOptions& opt = {});

// The bug's identity, whatever case shows it: property, implementation and
// failing outputs (sorted). dtype and shape are left out on purpose, so one
// bug seen in several dtypes is one failure.
std::string failure_signature(const std::string& impl, const Verdict& v);

// max |err|/bound of each output (kOutputNames order) of one run of impl on
// c against the oracle; -1 where the run failed. For the fuzzer's features.
std::vector<double> error_over_bound(const Subject& impl, const Case& c);

}  // namespace gatecheck::fuzz
