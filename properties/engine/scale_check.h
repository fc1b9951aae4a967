// The check engine's side of the scale tier (scale_tier.h): what run_check
// does for a case drawn at scale. Case j of the scale tier of a property is
// draw_scale_case(seed, property, j, limits): its own stream, so the small
// cases of a seed are the same with the tier on or off.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "check_engine.h"
#include "../scale/scale_cost.h"
#include "../scale/scale_properties.h"

namespace gatecheck {

// The limits of each device, fixed at their first use in a run.
class ScaleLimitsCache {
 public:
  const ScaleLimits& get(Device d, const ScaleOptions& o);

 private:
  std::map<int, ScaleLimits> by_device_;
};

// A scale slot's outcome (ScaleTierPair::run): the draws that did not run
// (why, for the coverage) and the one that did.
struct ScaleSlotRun {
  std::vector<std::string> skipped;  // why each draw before it did not run
  std::vector<ScaleSkipRecord> skipped_draws;  // the same draws: their shapes, and estimates where made
  bool ran = false;                  // false: abandoned, or a stop cut its call short
  int64_t draw = 0;                  // j of draw_scale_case(seed, property, j)
  ScaleCase c;
  Verdict verdict;
  double seconds = 0;          // the one that ran
  double waited = 0;           // of those, its wait for the small cases under way (device_gate.h)
  double skipped_seconds = 0;  // the others
  bool nothing_fits = false;   // no draw's estimated cost fitted the time the slot had
  double allowance = -1;       // that time (negative: no time budget)
  double estimate = 0;         // the estimated seconds of the one that ran
  double expected_wait = 0;    // and the wait for the device expected beside it (with an allowance)
  std::string rate_source;     // where the rate of that estimate came from
  int64_t parts = 0;           // its plan's non-empty batches (0: a check without a plan)
  int64_t units = 0;           // its cost in element-equivalents (scale_cost_units)
};

// Draws a slot with a time allowance tries before it gives up: each that
// does not fit is skipped, and counted in the coverage as such. Drawing costs
// time too (an invariance draw builds its index to check its plan).
constexpr int kScaleDrawsToFit = 8;
// Before any scale case of the implementation has run in this run: the
// smallest of this many draws runs first, to measure its rate.
constexpr int kScaleProbeDraws = 4;

// One implementation x property pair's scale tier, shared by the workers of
// a check (pair_schedule.h decides which slots are scale slots). Scale slot
// q runs once slots 0 .. q-1 have run, whichever workers took them: it tries
// draws j, j+1, ... (from where the slot before it stopped) until one runs,
// as a serial loop does, so the draws of slot q are the same for any number
// of workers. Scale cases run one at a time in a process (each may hold most
// of the device's memory).
class ScaleTierPair {
 public:
  // `cost` is the run's, shared by its pairs: each case that runs adds to it.
  ScaleTierPair(const CheckOptions& opt, ScaleLimitsCache& limits, ScaleCostModel& cost, const Subject& impl,
                const std::string& property, ScaleCoverage& cov);
  // The share of the pair's budget for the scale tier (0: it is off here).
  double share() const { return limits_ ? share_ : 0; }
  // Runs scale slot `ordinal`, at `position` of the pair, on this thread.
  // Returns with ran false, having run nothing, once abandon() or
  // cut_after(p < position) says the slot no longer counts. With an
  // `allowance` (>= 0, seconds) it runs only a draw whose estimated cost fits
  // what is left of it; the case may still run past it, and the run says so.
  ScaleSlotRun run(int64_t ordinal, int64_t position, double allowance = -1);
  void abandon();
  void cut_after(int64_t position);
  // A failing slot's report, shrunk on the calling thread (shrink_scale.h).
  FailureReport report(const ScaleSlotRun& r, double found_after) const;

 private:
  ScaleCheckOptions check_options(int64_t draw) const;
  const CheckOptions& opt_;
  ScaleCostModel& cost_;
  const Subject& impl_;
  const std::string& property_;
  const ScaleLimits* limits_ = nullptr;
  double share_ = 0;
  std::mutex m_;  // guards the four below
  std::condition_variable turn_changed_;
  int64_t turn_ = 0;       // the ordinal that runs next
  int64_t next_draw_ = 0;  // its first draw
  int64_t cut_ = INT64_MAX;
  bool abandoned_ = false;
};

// How a failure is described in reports and files, for both tiers.
std::string describe_found_case(const FailureReport& f);    // the case it was found on
struct FailureShape {
  DType dtype;
  int64_t rows, dim, gates;
};
FailureShape failure_shape(const FailureReport& f);  // of the minimal case

}  // namespace gatecheck
