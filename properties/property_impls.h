// The individual properties behind check_property (properties.h). One
// function per property, grouped by what they need: the oracle, a batch plan,
// the guarded buffers, or bad inputs through the ABI.
#pragma once

#include "properties.h"

namespace gatecheck::detail {

Verdict accuracy(const Implementation& impl, const Case& c, const PropertyOptions& o);
Verdict eager_exact(const Implementation& impl, const Case& c, const PropertyOptions& o);
Verdict row_invariance(const Implementation& impl, const Case& c, const PropertyOptions& o);
Verdict segment_invariance(const Implementation& impl, const Case& c, const PropertyOptions& o);
Verdict repeatable(const Implementation& impl, const Case& c, const PropertyOptions& o);
Verdict inputs_untouched(const Implementation& impl, const Case& c, const PropertyOptions& o);
Verdict full_write(const Implementation& impl, const Case& c, const PropertyOptions& o);
Verdict no_oob_write(const Implementation& impl, const Case& c, const PropertyOptions& o);
Verdict error_inputs(const Implementation& impl, const Case& c, const PropertyOptions& o);

// Shared helpers.
// run_case, or run_case_isolated when o.isolate is set.
RunResult run(const Implementation& impl, const Case& c, const PropertyOptions& o, const RunOptions& r = {});
// A verdict for a run that returned an error on valid input.
Verdict run_failed(const std::string& property, const Case& c, const std::string& what, const Status& s);
// Adds a failing comparison to v (marks the output failed, fails v).
void add_failure(Verdict& v, const Comparison& cmp);
// Appends b's counts and (up to kMaxMismatches) mismatches to a.
void merge_into(Comparison& a, const Comparison& b);

}  // namespace gatecheck::detail
