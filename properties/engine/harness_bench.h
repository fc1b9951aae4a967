// `gatecheck bench --harness`: how many generated cases per second each
// property checks on this machine (generation, runs and oracle included),
// with --jobs N beside --jobs 1 from the same run, and where a case's time
// goes (harness/stage_clock.h). Each figure follows an untimed case per
// worker thread: steady state, without what a check pays once per thread. A benchmark, not a test: it reports, it never
// fails on a number.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "../../harness/run/stage_clock.h"
#include "../catalog/contract.h"
#include "../generate/generators.h"

namespace gatecheck {

struct HarnessBenchRow {
  std::string impl, property;
  int jobs = 1;
  int64_t cases = 0;
  double seconds = 0, cases_per_second = 0;
  bool passed = true;          // a failure during the bench is reported too
  StageTimes stages;           // summed over the workers
  double worker_seconds = 0;   // the workers' time, summed
};

struct HarnessBenchOptions {
  std::vector<std::string> properties = default_properties();
  double seconds_per_property = 2;
  // > 0: each figure is these many cases rather than seconds_per_property's
  // worth, so that every implementation runs the same cases (a faster one
  // would otherwise run further into the generator's sequence, another mix).
  int64_t cases_per_property = 0;
  uint64_t seed = 1;
  GenLimits limits;
  bool isolate = false;  // as CheckOptions::isolate
  double isolate_timeout_seconds = 60;
  int jobs = 0;  // the parallel figure's workers (0: the machine's cores); --jobs 1 runs beside it (or alone)
  // What `check` does before every call (its in-flight snapshot), so that the
  // figures include it; may be empty.
  std::function<void(const Subject&, const std::string& property, const Case&)> before_run;
  std::function<void()> after_run;
};

// One row per implementation x property x jobs (1, then o.jobs unless it is
// 1), listed by implementation. Measured property by property, every
// implementation's figures of a property one after the other (the two jobs
// counts of each together), so that those compared share the machine's load.
std::vector<HarnessBenchRow> harness_bench(const std::vector<Subject>& impls, const HarnessBenchOptions& o);

// Runs harness_bench on `impls` (the host implementation when empty) and
// writes the tables to `out`, and the rows as JSON to `json` when not empty
// ("-": to `out` instead of the tables). Returns 0, or 2 for a bad option
// (message on `out`).
int run_harness_bench(const std::vector<Subject>& impls, const HarnessBenchOptions& o, std::ostream& out,
                      const std::string& json = "");

}  // namespace gatecheck
