// The properties: each takes an Implementation and a Case and returns a
// Verdict with evidence. Properties never print and never use test-framework
// assertions; front ends (CLI, GoogleTest, fuzzers) decide what to do.
#pragma once

#include <string>
#include <vector>

#include "../harness/implementation.h"
#include "../harness/runner.h"
#include "../oracles/oracle.h"
#include "case.h"

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
};

// Runs one property. Unknown names throw std::invalid_argument.
Verdict check_property(const std::string& property, const Implementation& impl, const Case& c);

// Does this failing verdict break a claim of the implementation for c's dtype?
bool breaks_claim(const Verdict& v, const Contract& contract, DType t);

// Full human-readable evidence for a failing verdict (multi-line).
std::string evidence_text(const Verdict& v);

}  // namespace gatecheck
