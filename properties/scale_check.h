// The check engine's side of the scale tier (scale_tier.h): what run_check
// does for a case drawn at scale, kept here so that the engine's loop holds
// one call. Case j of the scale tier of a property is
// draw_scale_case(seed, property, j, limits): its own stream, so the small
// cases of a seed are the same with the tier on or off.
#pragma once

#include <map>
#include <string>

#include "check_engine.h"
#include "scale_properties.h"

namespace gatecheck {

// The limits of each device, fixed at their first use in a run.
class ScaleLimitsCache {
 public:
  const ScaleLimits& get(Device d, const ScaleOptions& o);

 private:
  std::map<int, ScaleLimits> by_device_;
};

// One implementation x property pair's scale tier. Its draws are numbered
// first_draw, first_draw + draw_stride, ...: a parallel engine gives each
// worker of a pair its own slot (first_draw = slot, draw_stride = workers) and
// its own ScaleTierPair, whose share rule then applies to that worker's time.
// Scale cases run one at a time in a process (each may hold most of the
// device's memory), whichever worker draws them.
class ScaleTierPair {
 public:
  ScaleTierPair(const CheckOptions& opt, ScaleLimitsCache& limits, const Subject& impl, const std::string& property,
                Coverage& cov, int64_t first_draw = 0, int64_t draw_stride = 1);
  enum Step {
    none,  // no scale case was due
    ran,   // one ran (passed, skipped, or an unclaimed finding)
    stop,  // a claimed failure (shrunk, in pr.failure), or a stop request: the pair ends
  };
  // Runs the next scale case if the share rule calls for one before case
  // number `cases_so_far` of the pair, `pair_seconds` into it.
  Step step(double pair_seconds, int64_t cases_so_far, PropertyResult& pr);
  int64_t cases() const { return share_.cases(); }

 private:
  const CheckOptions& opt_;
  const Subject& impl_;
  const std::string& property_;
  Coverage& cov_;
  const ScaleLimits* limits_ = nullptr;
  ScaleShare share_;
  int64_t next_draw_ = 0, draw_stride_ = 1;
};

// How a failure is described in reports and files, for both tiers.
std::string describe_found_case(const FailureReport& f);    // the case it was found on
struct FailureShape {
  DType dtype;
  int64_t rows, dim, gates;
};
FailureShape failure_shape(const FailureReport& f);  // of the minimal case

}  // namespace gatecheck
