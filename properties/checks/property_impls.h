// What the properties' checks (catalog/property_checks.h, one function per
// property, one file per kind: the oracle, a batch plan, the guarded buffers,
// bad inputs) share. A check leaves Verdict::property to check_property,
// which looks it up in the catalog.
#pragma once

#include "../catalog/property_checks.h"
#include "properties.h"

namespace gatecheck::detail {

// run_case, or run_case_isolated when o.isolate is set.
RunResult run(const Implementation& impl, const Case& c, const PropertyOptions& o, const RunOptions& r = {});
// The case's calls are over: o.device_done, where set.
inline void device_done(const PropertyOptions& o) {
  if (o.device_done) o.device_done();
}
// A verdict for a run that returned an error on valid input.
Verdict run_failed(const Case& c, const std::string& what, const Status& s);
// Adds a failing comparison to v (marks the output failed, fails v).
void add_failure(Verdict& v, const Comparison& cmp);
// Appends b's counts and (up to kMaxMismatches) mismatches to a.
void merge_into(Comparison& a, const Comparison& b);
// "micro_batches split into 3 parts of 4, 4, 2 rows" (and the rows of each
// part of a small arbitrary split): split_invariance's evidence.
std::string split_text(const BatchPlan& p);

}  // namespace gatecheck::detail
