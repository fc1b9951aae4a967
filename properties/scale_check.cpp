#include "scale_check.h"

#include <algorithm>
#include <chrono>
#include <mutex>

#include "../harness/scale_backend.h"
#include "shrink_scale.h"

namespace gatecheck {

namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
}  // namespace

const ScaleLimits& ScaleLimitsCache::get(Device d, const ScaleOptions& o) {
  auto it = by_device_.find(int(d));
  if (it == by_device_.end()) it = by_device_.emplace(int(d), scale_limits(d, o)).first;
  return it->second;
}

ScaleTierPair::ScaleTierPair(const CheckOptions& opt, ScaleLimitsCache& limits, const Subject& impl,
                             const std::string& property, Coverage& cov, int64_t first_draw, int64_t draw_stride)
    : opt_(opt), impl_(impl), property_(property), cov_(cov),
      share_(has_scale_version(property) ? scale_share_for(opt.scale, impl.device) : 0, opt.seconds > 0),
      next_draw_(first_draw), draw_stride_(std::max<int64_t>(draw_stride, 1)) {
  const double share = scale_share_for(opt.scale, impl.device);
  if (!opt.scale.enabled) return;
  cov_.scale.shares[device_name(impl.device)] = share;
  if (share <= 0) return;
  limits_ = &limits.get(impl.device, opt.scale);
  if (!limits_->past_2_31_note.empty()) cov_.scale.notes[device_name(impl.device)] = limits_->past_2_31_note;
}

ScaleTierPair::Step ScaleTierPair::step(double pair_seconds, int64_t cases_so_far, PropertyResult& pr) {
  if (!limits_ || !share_.due(pair_seconds, cases_so_far)) return none;
  static std::mutex one_at_a_time;  // a scale case may hold most of the device's memory
  const std::lock_guard<std::mutex> lock(one_at_a_time);
  const auto t0 = Clock::now();
  const int64_t j = next_draw_;
  next_draw_ += draw_stride_;
  ScaleCase c;
  try {
    c = make_scale_case(draw_scale_case(opt_.seed, property_, j, *limits_));
  } catch (const std::invalid_argument& e) {  // a draw the ladder should never make
    share_.spent(since(t0));
    ++cov_.scale.skipped[std::string("bad draw: ") + e.what()];
    return ran;
  }
  if (opt_.before_scale_run) opt_.before_scale_run(impl_, property_, c);
  ScaleCheckOptions so;
  so.memory_bytes = limits_->memory_bytes;
  so.repeat_runs = opt_.scale.repeat_runs;
  so.stress_seed = opt_.seed ^ uint64_t(j);
  Verdict v;
  try {
    v = check_scale_property(property_, impl_, c, so);
  } catch (const ScaleNoMemory&) {
    share_.spent(since(t0));
    ++cov_.scale.skipped[std::string("out of memory (") + device_name(impl_.device) + ")"];
    return ran;
  } catch (const std::runtime_error& e) {  // the harness's own calls failed (the implementation's come back as Status)
    share_.spent(since(t0));
    ++cov_.scale.skipped[std::string("harness error: ") + e.what()];
    return ran;
  }
  if (opt_.stop_requested && opt_.stop_requested()) return stop;  // its call may have been cut short
  const double secs = since(t0);
  share_.ran(secs);
  cov_.scale.add(c, secs);
  ++pr.cases;
  if (v.passed) return ran;
  const bool claimed = breaks_claim(v, impl_.contract, c.dtype);
  if (!claimed && pr.failure) return ran;  // one finding is enough; keep looking for a claimed failure
  FailureReport f;
  f.scale_original = c;
  f.seconds_to_find = pair_seconds + secs;
  f.verdict = v;
  f.scale_shrunk = c;
  // A sticky CUDA error leaves nothing to shrink with in this process: the
  // case as drawn is kept (gatecheck repro replays it in a fresh one).
  if (scale_device_usable(impl_.device)) {
    std::function<void(const ScaleCase&)> before;
    if (opt_.before_scale_run) before = [&](const ScaleCase& cand) { opt_.before_scale_run(impl_, property_, cand); };
    const ScaleShrinkResult sh =
        shrink_scale_case(impl_, property_, c, v, so, nullptr, opt_.max_shrink_seconds, opt_.stop_requested, before);
    f.verdict = sh.verdict;
    f.shrink_steps = sh.steps;
    if (sh.small) {
      f.shrunk = *sh.small;
      f.scale_shrunk.reset();
    } else {
      f.scale_shrunk = sh.minimal;
    }
  }
  f.claimed = breaks_claim(f.verdict, impl_.contract, f.scale_shrunk ? f.scale_shrunk->dtype : f.shrunk.dtype);
  pr.failure = std::move(f);
  pr.passed = false;
  return claimed || (opt_.stop_requested && opt_.stop_requested()) ? stop : ran;
}

std::string describe_found_case(const FailureReport& f) {
  return f.scale_original ? describe(*f.scale_original) : describe(f.original);
}

FailureShape failure_shape(const FailureReport& f) {
  if (f.scale_shrunk) return {f.scale_shrunk->dtype, f.scale_shrunk->rows, f.scale_shrunk->dim, f.scale_shrunk->gates};
  return {f.shrunk.dtype, f.shrunk.rows, f.shrunk.dim, f.shrunk.gates};
}

}  // namespace gatecheck
