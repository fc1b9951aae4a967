// The properties at scale, on a scale-tier case (case/scale_case.h) run in a
// ScaleSession (harness/scale_session.h), so that nothing of the size of a
// tensor is copied to the host:
//  - accuracy: exact values are checked element for element, every element
//    of every output, against the exact-by-construction result; rounding
//    values against the float64 oracle on a stated sample (oracle_sampled.h):
//    every element of the sampled rows (the first and last, those at the grid
//    and offset edges, and random ones) and grad_gate of every gate they
//    touch, summed over all of its rows, on all columns or a stated sample;
//  - repeatable: runs under scheduling stress (harness/scale_stress.h), each
//    compared bit for bit with an unperturbed first run;
//  - row_invariance, segment_invariance: the plan's batches, each run under a
//    perturbation, compared with the whole batch by row fingerprints, with the
//    differing elements of the first differing rows as evidence;
//  - inputs_untouched, full_write, no_oob_write: two runs under the two
//    poisons, inputs checked against their generated values, canaries.
// Each returns the same Verdict as its small-case version.
#pragma once

#include <string>

#include "../../case/scale_case.h"
#include "../checks/properties.h"

namespace gatecheck {

struct ScaleCheckOptions {
  uint64_t memory_bytes = 0;  // a session's budget (0: only what is free)
  int repeat_runs = 5;        // repeatable: runs, the first unperturbed
  uint64_t stress_seed = 0;   // the perturbations' schedule
};

// Throws ScaleNoMemory (harness/scale_backend.h) when the case does not fit
// where the implementation runs, or the implementation itself reports running
// out of memory on it: a skip, not a verdict. Throws std::invalid_argument for
// a property without a scale version (scale_tier.h), or a case that breaks its
// own rules (exact values past their bound).
Verdict check_scale_property(const std::string& property, const Implementation& impl, const ScaleCase& c,
                             const ScaleCheckOptions& o = {});

// Can this process still use `d` (false after a sticky CUDA error)?
bool scale_device_usable(Device d);

}  // namespace gatecheck
