// The check engine: generates cases (RapidCheck generators, seeded), runs the
// properties on each implementation within a budget, shrinks each failure,
// and returns results plus coverage statistics. The CLI, GoogleTest and the
// fuzzers are front ends over it; it never prints.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "../catalog/contract.h"
#include "../../case/case.h"
#include "../../harness/run/stage_clock.h"
#include "../generate/generators.h"
#include "../checks/properties.h"
#include "../scale/scale_tier.h"

namespace gatecheck {

struct CheckProgress {
  std::string impl, property;          // what runs now
  int64_t cases_done = 0;              // across everything so far
  double elapsed = 0;
  double seconds_left = 0;             // of the time budget (0 without one); shrinking is off it
  double cases_per_second = 0;
  int64_t failures = 0;
};

// Cases per implementation x property when a run has neither a time budget
// nor a case budget (RapidCheck's own default).
constexpr int64_t kCasesWithoutBudget = 100;

// The fewest cases a claimed property must run for its pass to mean
// something: fewer (a budget eaten elsewhere, a slow implementation) is
// "inconclusive (N cases)", never "pass". A run that asks for fewer cases
// with --cases gets what it asked for as its floor.
constexpr int64_t kCaseFloor = 20;

struct CheckOptions {
  std::vector<std::string> properties = default_properties();
  uint64_t seed = 0;
  double seconds = 30;       // whole-run time budget for cases, shrinking on top (0 = none: max_cases, else kCasesWithoutBudget)
  int64_t max_cases = 0;     // per implementation x property (0 = budget only)
  GenLimits limits;          // generator knobs (generators.h)
  bool isolate = false;      // run each call in a child process (harness/isolate.h)
  double isolate_timeout_seconds = 60;  // with isolate: a call that takes longer is reported as hung
  // A FailureReport::reproduce string (RapidCheck's own encoding, as in
  // RC_PARAMS="reproduce=..."). When set, only the impl x property pairs it
  // names run, each on exactly the case it encodes; seed and budget are unused.
  // The generator limits must be the ones the failure was found with.
  std::string reproduce;
  // Also take a reproduce string from RC_PARAMS="reproduce=..." (RapidCheck's
  // own configuration), when `reproduce` is empty and RC_PARAMS names one of
  // the impl x property pairs run here; keys for other tests are ignored.
  bool rc_params_reproduce = true;
  double max_shrink_seconds = 60;  // per failure
  // Worker threads that run cases at once (docs/parallel.md): each draws
  // case k of a property from (seed, property, k) alone (case_slots.h), so
  // any number gives the same cases and, with max_cases, the same results.
  // Shrinking and reproduce replays run on the calling thread.
  int jobs = 1;
  // Which generator tier draws case k of a property (case_slots.h); empty:
  // tier 0 for every case. A pure function of its arguments.
  std::function<int(const std::string& property, int64_t index)> tier_of;
  // Called before an implementation runs a case (crash safety: the CLI saves
  // it), on the thread that runs it: check_worker_index() (check_workers.h)
  // says which worker that is, and calls on different workers overlap.
  std::function<void(const Subject&, const std::string& property, const Case&)> before_run;
  // Called on the same thread once that case's check is over.
  std::function<void()> after_run;
  // Called on the worker's thread once it has drawn a small case, before the
  // case waits for its device (device_gate.h): tests watch the drawing there.
  std::function<void()> after_generate;
  // The scale tier (scale_tier.h): off unless enabled; before_scale_run is
  // before_run for its cases, which are specs, not values (after_run follows
  // it too, on the same thread).
  ScaleOptions scale;
  std::function<void(const Subject&, const std::string& property, const ScaleCase&)> before_scale_run;
  // End the whole run at its first claimed failure (after shrinking it). The
  // cases drawn up to there are the same as without it.
  bool stop_on_failure = false;
  std::function<void(const CheckProgress&)> progress;   // at most a few times per second
  // Polled between cases and between shrink steps: once it returns true the
  // run stops. The case in hand is dropped (a call cut short by the same
  // Ctrl-C must not read as a failure), and a failure being shrunk keeps its
  // smallest case so far. CheckReport::interrupted says so.
  std::function<bool()> stop_requested;
};

// Calls opt.after_run when it goes out of scope, also when the check throws.
struct AfterRunGuard {
  const CheckOptions& opt;
  ~AfterRunGuard() {
    if (opt.after_run) opt.after_run();
  }
};

struct FailureReport {
  Case original, shrunk;
  Verdict verdict;                 // on the shrunk case
  bool claimed = false;            // breaks a claim (exit 1) or is a finding
  double seconds_to_find = 0;
  int shrink_steps = 0;
  // The shrink ended at its time budget (or a stop) with candidates left to
  // try: a smaller case may still fail. `shrunk` is then the smallest found.
  bool shrink_cut_short = false;
  std::string reproduce;           // RapidCheck reproduce string (RC_PARAMS="reproduce=..."),
                                   // accepted back by CheckOptions::reproduce
  // A failure found by the scale tier: the case as drawn, and the minimal
  // case when it is still a scale case (else `shrunk` holds the minimal case
  // and `original` is empty). See scale_check.h.
  std::optional<ScaleCase> scale_original, scale_shrunk;
};

// The key a reproduce string files a failure under: "host@cpu/accuracy", and
// the generator's shape limits where they are not the defaults
// ("host@cpu/accuracy/rows<=3000,dim<=8,gates<=256"): a reproduce string is a
// shrink path of one generator, and followed in another it names another case.
std::string reproduce_key(const Subject& impl, const std::string& property, const GenLimits& limits);

// A scale case that ran, in its slot's order: the time its slot had, what the
// cost model expected of it and what it took (the JSON report's scale_runs).
struct ScaleRunRecord {
  std::string c;   // describe(case)
  int64_t parts = 0;  // its plan's non-empty batches (0: a check without a plan)
  int64_t units = 0;  // its cost in element-equivalents (properties/scale/scale_cost.h)
  double allowance = -1, estimate = 0, seconds = 0;  // seconds (allowance < 0: no time budget)
  double waited = 0;  // of its seconds, the wait for the small cases under way (engine/device_gate.h)
  double expected_wait = 0;  // the wait its estimate expected beside it (ScaleCostModel::expected_wait)
};

// A scale draw that did not run, and why (the JSON report's scale_skipped):
// with a time budget mostly one whose estimate did not fit the time its slot
// had left, with that estimate, so that a tier that ran few cases shows what
// the cost model expected of the others.
struct ScaleSkipRecord {
  std::string shape;  // dtype, rows, dim, gates and rung of the draw ("" when the draw itself failed)
  std::string why;    // as the coverage's skipped counts say it
  int64_t parts = 0, units = 0;  // the parts bound and units its estimate used (0: not estimated)
  double estimate = 0, left = 0;  // seconds: its estimate, and what its slot had left then
  double expected_wait = 0;       // the wait for the device expected beside the estimate
  std::string rate_source;        // where the estimate's rates came from
};

struct PropertyResult {
  std::string impl;
  Device device = Device::cpu;
  std::string property;
  bool claimed = true;             // property claimed (for at least one dtype seen)
  int64_t cases = 0;
  int64_t case_floor = 0;          // kCaseFloor, or the case budget when lower (1 for a replay)
  bool passed = true;
  double seconds = 0;
  std::optional<FailureReport> failure;
  StageTimes stages;          // where the workers' time went (harness/stage_clock.h), summed over them
  double worker_seconds = 0;  // the workers' time on this pair, summed (stages plus what no stage timed)
  // Scale cases that ran past the time their share had left (the one case in
  // flight may): each says its size, its estimate and how far past it ran.
  std::vector<std::string> overruns;
  std::vector<ScaleRunRecord> scale_runs;
  std::vector<ScaleSkipRecord> scale_skipped;  // in slot order
  // A claimed property that held on fewer cases than its floor: not a pass.
  bool inconclusive() const { return claimed && passed && cases < case_floor; }
};

struct Coverage {
  std::map<std::string, int64_t> patterns, dtypes, sizes, values, plans;
  // dim -> cases, for dims of kWideDimCounted (1,000) and more: which wide
  // dims the small tier drew (generators.h).
  std::map<int64_t, int64_t> wide_dims;
  ScaleCoverage scale;  // the scale tier's cases (counted apart from the above)
};

struct CheckReport {
  uint64_t seed = 0;
  int jobs = 1;
  double seconds = 0;
  std::vector<PropertyResult> results;
  Coverage coverage;
  bool interrupted = false;  // stopped by CheckOptions::stop_requested before its budget ran out
  bool stopped_on_failure = false;  // CheckOptions::stop_on_failure ended it early
  bool any_claimed_failure() const;
  bool any_inconclusive() const;
};

CheckReport run_check(const std::vector<Subject>& impls, const CheckOptions& opt);

// The pairs ("host@cpu/accuracy") that run_check will replay from
// RC_PARAMS="reproduce=..." rather than generate from the seed within the
// budget; empty when it will not (no such string, opt.reproduce set, or
// rc_params_reproduce off). Throws std::invalid_argument on a bad RC_PARAMS, or
// on one made for a pair of this run under other generator limits.
std::vector<std::string> rc_params_replays(const std::vector<Subject>& impls, const CheckOptions& opt);

// Does contract k claim any part of `property` (the whole, or one output) for
// one of `dtypes`? The "claimed" column of a check's results.
bool claimed_for_some_dtype(const Contract& k, const std::string& property, const std::vector<DType>& dtypes);

}  // namespace gatecheck
