// The properties: each takes an Implementation and a Case and returns a
// Verdict with evidence. Properties never print and never use test-framework
// assertions; front ends (CLI, GoogleTest, fuzzers) decide what to do.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "../../case/case.h"
#include "../../harness/run/runner.h"
#include "../../oracles/oracle.h"
#include "../catalog/contract.h"

namespace gatecheck {

struct Verdict {
  std::string property;
  bool passed = true;
  // Outputs that failed ("out", ..., or "" when the failure is not tied to one
  // output, e.g. a crash or a vacuous plan). Claims are judged per output.
  std::vector<std::string> failed_outputs;
  std::vector<Comparison> comparisons;   // failing comparisons, with their mismatches
  std::vector<MemoryFinding> memory;     // failing memory findings
  std::string message;                   // one paragraph a person can act on
  int64_t compared = 0;                  // elements or rows compared (vacuity guard)
  bool vacuous = false;                  // failed only because the plan compared nothing
  // error_inputs: its probes' child died and, with PropertyOptions::name_probes
  // off, no probe was run alone to name the one that killed it.
  bool probes_unnamed = false;
};

struct PropertyOptions {
  PropertyOptions() = default;
  PropertyOptions(bool isolate_calls, double timeout_seconds)
      : isolate(isolate_calls), isolate_timeout_seconds(timeout_seconds) {}
  // Run every call of the implementation in a child process (harness/isolate.h),
  // so a crash, abort or hang becomes a failing verdict, not a dead run.
  bool isolate = false;
  double isolate_timeout_seconds = 60;
  // The inputs the implementation's contract counts as valid: error_inputs
  // builds its bad inputs from valid ones. The Subject overload of
  // check_property sets it from the contract.
  ValidInputs valid;
  // error_inputs: when the child running every probe dies, run each probe
  // alone to name the one that killed it (a fresh process a crash: under
  // --isolate a Python or torch start each). Shrinking asks only whether a
  // candidate still fails, so it turns this off and names them on the minimal
  // case (Verdict::probes_unnamed says a verdict still lacks the names).
  bool name_probes = true;
  // Called on the checking thread once the property's calls of the
  // implementation for the case are over and only host work is left (the
  // oracle, the comparisons): the engine gives the case's hold on its device
  // back there (properties/engine/device_gate.h). Properties that compare
  // between calls do not call it.
  std::function<void()> device_done;
};

// Runs one property. Unknown names throw std::invalid_argument.
// error_inputs runs its bad-input probes in a forked child process on the
// CPU always (bad input is where implementations crash); under isolate, for
// CUDA and torch-eager, in a fresh process (this program re-executed: a fork
// cannot use CUDA once the parent has); without isolate, CUDA in this process
// (a crash there is still named by the CLI's crash guard).
Verdict check_property(const std::string& property, const Implementation& impl, const Case& c,
                       const PropertyOptions& opt = {});
// The same for an implementation held to a contract: c must be valid input
// under it too (std::invalid_argument otherwise, as for input the op contract
// refuses), and error_inputs builds its probes within it.
Verdict check_property(const std::string& property, const Subject& s, const Case& c,
                       const PropertyOptions& opt = {});

// A shrinking step's verdict, made with name_probes off: if it left the
// probes unnamed, the property again on its case with them named, unless
// that passes (a flaky failure: the unnamed verdict stands).
Verdict with_probes_named(Verdict v, const std::string& property, const Subject& s, const Case& c,
                          const PropertyOptions& opt);

// Does this failing verdict break a claim of the implementation for c's dtype?
bool breaks_claim(const Verdict& v, const Contract& contract, DType t);

// Full human-readable evidence for a failing verdict (multi-line).
std::string evidence_text(const Verdict& v);

}  // namespace gatecheck
