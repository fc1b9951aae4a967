// The second shrink: RapidCheck shrinks within what its generators can
// express; the project's shrinker goes further (single rows, merged gates,
// values towards 0 and 1). The RapidCheck reproduce string still names
// RapidCheck's counterexample; the saved file holds the smaller one.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "../properties/engine/check_engine.h"
#include "../properties/shrink/shrink.h"

namespace gatecheck {

// before(impl, property, case) puts the case on disk first: a crash while
// shrinking must not lose the failure found.
using BeforeShrinkRun = std::function<void(const Subject&, const std::string&, const Case&)>;

// Shrinks every failure of `report` that is not a scale case (those the scale
// tier shrinks) further, in place, for at most max_seconds each; a failure's
// shrink_cut_short then says whether this shrink ended before a fixed point.
// Under popt.isolate its calls run in child processes. A stop request ends it and marks the report interrupted, keeping
// what it has shrunk so far. A failure that does not reproduce outside the
// engine (a flaky one) keeps RapidCheck's case. A failure a stop leaves unshrunk here is marked cut short.
void shrink_failures_further(CheckReport* report, const std::vector<Subject>& impls, const BeforeShrinkRun& before,
                             const PropertyOptions& popt, const ShrinkStop& stop, double max_seconds);

}  // namespace gatecheck
