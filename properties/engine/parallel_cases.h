// The cases of one implementation x property, run on every worker of a
// check at once, with the verdicts a serial run would give: slots (small
// cases and the scale tier's, pair_schedule.h) are handed out in position
// order, a claimed failure at position p stops the handing out after p, and
// what counts is decided by position, not by which worker finished first:
//  - the failure reported is the claimed one of lowest position, else the
//    unclaimed one of lowest position (a serial run stops at the first
//    claimed failure, and keeps its first finding);
//  - the cases counted, and the coverage, are those of position up to that
//    claimed failure (all of them when there is none): cases of higher
//    position that other workers had in hand are dropped.
// So with a case budget, any number of workers gives the same cases, counts,
// coverage and failure as one; with a time budget the count varies, but small
// case k is still the same case, and so is scale draw j. The failure is
// shrunk afterwards, by the caller.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "../../harness/run/stage_clock.h"
#include "case_slots.h"
#include "check_engine.h"
#include "check_workers.h"
#include "scale_check.h"

namespace gatecheck {

struct FoundFailure {
  int64_t position = 0;
  // A small case's:
  CaseSlot slot;
  std::optional<rc::Shrinkable<Case>> shrinkable;
  Case c;
  Verdict verdict;
  // Or a scale case's (its verdict is scale->verdict):
  std::optional<ScaleSlotRun> scale;
  bool claimed = false;
  double found_after = 0;  // seconds from the start of the pair
};

struct PairCases {
  int64_t cases = 0;
  Coverage coverage;
  std::optional<FoundFailure> failure;
  bool interrupted = false;    // opt.stop_requested said stop
  StageTimes stages;           // summed over the workers
  double worker_seconds = 0;   // the workers' wall time, summed
  std::vector<std::string> overruns;  // scale cases past their time (PropertyResult::overruns)
  std::vector<ScaleRunRecord> scale_runs;  // in slot order
  std::vector<ScaleSkipRecord> scale_skipped;  // in slot order
};

// Runs the cases of (impl, property), drawn within `limits`, on `workers`
// until `max_cases` (> 0) slots are handed out, or `slice_seconds` (>= 0;
// negative: no time budget) have gone since `start` (one case at least), or a
// claimed failure, or a stop. `scale` is the pair's scale tier (its share 0:
// none). `tick(done)` is called from this thread a few times a second with
// the cases completed so far.
PairCases run_pair_cases(CheckWorkers& workers, const Subject& impl, const std::string& property,
                         const GenLimits& limits, ScaleTierPair& scale, const CheckOptions& opt, int64_t max_cases,
                         double slice_seconds, std::chrono::steady_clock::time_point start,
                         const std::function<void(int64_t)>& tick);

}  // namespace gatecheck
