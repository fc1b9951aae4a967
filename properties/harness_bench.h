// `gatecheck bench --harness`: how many generated cases per second each
// property checks on this machine (generation, runs and oracle included).
// A benchmark, not a test: it reports, it never fails on a number.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "contract.h"
#include "generators.h"

namespace gatecheck {

struct HarnessBenchRow {
  std::string impl, property;
  int64_t cases = 0;
  double seconds = 0, cases_per_second = 0;
  bool passed = true;  // a failure during the bench is reported too
};

// Accuracy cases each implementation runs, untimed, before its first timed property.
constexpr int64_t kHarnessWarmUpCases = 30;

struct HarnessBenchOptions {
  std::vector<std::string> properties = default_properties();
  double seconds_per_property = 2;
  uint64_t seed = 1;
  GenLimits limits;
};

std::vector<HarnessBenchRow> harness_bench(const std::vector<Subject>& impls, const HarnessBenchOptions& o);

// Runs harness_bench on `impls` (the host implementation when empty) and
// writes a table to `out`. Returns 0, or 2 for a bad option (message on `out`).
int run_harness_bench(const std::vector<Subject>& impls, const HarnessBenchOptions& o, std::ostream& out);

}  // namespace gatecheck
