// Which slot of one implementation x property comes next: a small case
// (case_slots.h) or a case of the scale tier (scale_check.h). Slots are handed
// out to any number of workers in position order, positions 0, 1, 2, ...
// counting both tiers; the case budget counts positions.
//  - With a case budget and no time budget, position n is a scale slot when
//    ScaleShare says so for case n (floor((n + 1) * share) grows there): a
//    function of n alone, so any number of workers gets the same slots, and
//    the serial loop's.
//  - With a time budget, a scale slot is handed out when none is running and
//    the scale tier has had less than its share of the pair's time so far
//    (wall time: scale cases run one at a time, whatever the workers). The
//    slot carries the time it may take: what is left of the tier's share of
//    the pair's slice, and never past the slice's end; the tier runs only a
//    draw whose estimated cost fits it (scale_cost.h), and once none does, the
//    pair hands out no more scale slots.
// Small slot k is case_slots.h's slot k whatever its position, so the small
// cases are the same with the scale tier on or off.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>

#include "case_slots.h"
#include "../scale/scale_tier.h"

namespace gatecheck {

struct PairSlot {
  int64_t position = 0;
  bool scale = false;
  CaseSlot small;             // a small slot's case
  int64_t scale_ordinal = 0;  // a scale slot's number among the scale slots (0, 1, ...)
  double scale_seconds = -1;  // the time a scale slot may take (negative: no time budget)
};

class PairSchedule {
 public:
  // share: the scale tier's (0: small slots only); time_budget: the share is
  // one of time (else of cases).
  PairSchedule(CaseSlots& small, double share, bool time_budget);
  // The next slot, or none once a limit is reached: position max_cases (when
  // > 0), or `slice_seconds` (when >= 0; negative: no time budget) gone since
  // `start` and at least one slot handed out, close(), or cut_after(p).
  std::optional<PairSlot> next(int64_t max_cases, double slice_seconds, std::chrono::steady_clock::time_point start);
  // A scale slot is over (with a time budget, the next may then be handed
  // out): `seconds` of the tier's time, `ran` whether a case ran.
  // nothing_fits: no draw fitted the time left, so no more scale slots.
  void scale_done(double seconds, bool ran, bool nothing_fits = false);
  // The time the tier may still take of a slice of `slice_seconds`, `elapsed`
  // of it gone (a pure function, exposed for tests).
  static double scale_allowance(double share, double slice_seconds, double elapsed, double scale_seconds_used);
  void close();
  void cut_after(int64_t position);  // a claimed failure there: what follows would not count

 private:
  std::mutex m_;
  CaseSlots& small_;
  ScaleShare share_;
  double share_value_;
  bool scale_on_, time_budget_;
  bool scale_running_ = false;
  int64_t position_ = 0, scale_handed_ = 0;
  int64_t last_ = INT64_MAX;
  bool closed_ = false;
};

}  // namespace gatecheck
