// The properties at scale, on a scale-tier case of any op (case/scale_case.h)
// run in a ScaleSession (harness/scale_session.h), so that nothing of the size
// of a tensor is copied to the host. Each reads the op's outputs by kind, as
// its small-case version does:
//  - accuracy (scale_accuracy.cpp): exact values, where the op's oracle has
//    them (gate_residual), element for element against the exact-by-
//    construction result; rounding values against the op's sampled float64
//    oracle (oracle_sampled.h): every element of the sampled rows' row outputs
//    (the first and last, those at the grid and offset edges, and random
//    ones), each segment sum of the gates they touch over all of its rows,
//    and each sum over every row, on all columns or a stated sample;
//  - repeatable: runs under scheduling stress (harness/scale_stress.h), each
//    compared bit for bit with an unperturbed first run;
//  - row_invariance (row-wise outputs), segment_invariance (segment sums):
//    the plan's batches, each run under a perturbation, compared with the
//    whole batch by row fingerprints, with the
//    differing elements of the first differing rows as evidence;
//  - inputs_untouched, full_write, no_oob_write: two runs under the two
//    poisons, inputs checked against their generated values, canaries;
//  - split_invariance (scale_split.cpp): the plan's split, each part's
//    partial through the declared exchange on the session's buffers (else
//    its row reductions summed in fp32 on the host), against the full batch.
// Each returns the same Verdict as its small-case version.
#pragma once

#include <string>

#include "../../case/scale_case.h"
#include "../checks/properties.h"

namespace gatecheck {

struct ScaleCallTimes;  // harness/scale/scale_session.h

struct ScaleCheckOptions {
  uint64_t memory_bytes = 0;  // a session's budget (0: only what is free)
  int repeat_runs = 5;        // repeatable: runs, the first unperturbed
  uint64_t stress_seed = 0;   // the perturbations' schedule
  ScaleCallTimes* times = nullptr;  // where the check's calls add their times (null: nowhere)
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
