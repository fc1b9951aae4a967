#include "harness_bench.h"

#include <algorithm>
#include <iomanip>
#include <ostream>
#include <stdexcept>

#include "check_engine.h"

namespace gatecheck {

namespace {

// Untimed cases first: an implementation's first calls pay once for what its
// later ones reuse (a Python door's first CUDA calls took 2 s: lazy module
// loading, library handles), which would otherwise land on the first property.
void warm_up(const Subject& impl, const HarnessBenchOptions& o) {
  CheckOptions opt;
  opt.properties = {"accuracy"};
  opt.seed = o.seed ^ 0x9e3779b97f4a7c15ull;  // not the timed cases
  opt.seconds = 0;
  opt.max_cases = kHarnessWarmUpCases;
  opt.limits = o.limits;
  opt.max_shrink_seconds = 0;
  run_check({impl}, opt);
}

}  // namespace

std::vector<HarnessBenchRow> harness_bench(const std::vector<Subject>& impls, const HarnessBenchOptions& o) {
  std::vector<HarnessBenchRow> rows;
  for (const auto& impl : impls) {
    warm_up(impl, o);
    for (const auto& p : o.properties) {
      CheckOptions opt;
      opt.properties = {p};
      opt.seed = o.seed;
      opt.seconds = o.seconds_per_property;
      opt.limits = o.limits;
      opt.max_shrink_seconds = 0;  // a bench measures checking, not shrinking
      const CheckReport rep = run_check({impl}, opt);
      for (const auto& r : rep.results) {
        HarnessBenchRow row{impl.label(), p, r.cases, r.seconds, r.seconds > 0 ? double(r.cases) / r.seconds : 0,
                            r.passed};
        rows.push_back(row);
      }
    }
  }
  return rows;
}

int run_harness_bench(const std::vector<Subject>& impls_in, const HarnessBenchOptions& o, std::ostream& out) {
  std::vector<Subject> impls = impls_in;
  if (impls.empty()) impls.push_back(make_subject("host", Device::cpu));
  std::vector<HarnessBenchRow> rows;
  try {
    rows = harness_bench(impls, o);
  } catch (const std::invalid_argument& e) {
    out << "bench --harness: " << e.what() << "\n";
    return 2;
  }
  out << "harness throughput (" << o.seconds_per_property << " s per property, seed " << o.seed
      << ", max rows " << o.limits.max_rows << ", max dim " << o.limits.max_dim << "; after "
      << kHarnessWarmUpCases << " untimed accuracy cases per implementation)\n";
  int w = 20;  // the implementation column fits the longest label
  for (const auto& r : rows) w = std::max(w, int(r.impl.size()) + 2);
  out << std::left << std::setw(w) << "impl" << std::setw(20) << "property" << std::right << std::setw(8)
      << "cases" << std::setw(10) << "seconds" << std::setw(12) << "cases/s" << "\n";
  for (const auto& r : rows)
    out << std::left << std::setw(w) << r.impl << std::setw(20) << r.property << std::right << std::setw(8)
        << r.cases << std::setw(10) << std::fixed << std::setprecision(2) << r.seconds << std::setw(12)
        << std::setprecision(1) << r.cases_per_second << (r.passed ? "" : "  (failed during bench)") << "\n";
  return 0;
}

}  // namespace gatecheck
