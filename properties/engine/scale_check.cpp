#include "scale_check.h"

#include "../../oracles/op_oracles.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <optional>
#include <utility>

#include "../../harness/scale/scale_backend.h"
#include "../../harness/scale/scale_session.h"
#include "../catalog/property_catalog.h"
#include "../scale/shrink_scale.h"
#include "device_gate.h"

namespace gatecheck {

namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
// A draw's shape as its estimate sees it (its plan is drawn after the shape).
std::string spec_shape(const ScaleSpec& s) {
  return std::string(dtype_name(s.dtype)) + " rows=" + std::to_string(s.rows) + " dim=" + std::to_string(s.dim) +
         " gates=" + std::to_string(s.gates) + (s.rung.empty() ? "" : " [" + s.rung + "]");
}
}  // namespace

const ScaleLimits& ScaleLimitsCache::get(Device d, const ScaleOptions& o) {
  auto it = by_device_.find(int(d));
  if (it == by_device_.end()) it = by_device_.emplace(int(d), scale_limits(d, o)).first;
  return it->second;
}

ScaleTierPair::ScaleTierPair(const CheckOptions& opt, ScaleLimitsCache& limits, ScaleCostModel& cost,
                             const Subject& impl, const std::string& property, ScaleCoverage& cov)
    : opt_(opt), cost_(cost), impl_(impl), property_(property) {
  if (!opt.scale.enabled) return;
  if (const OpOracle* o = find_op_oracle(*impl.op); !o || !o->sampled) {
    cov.notes[impl.op->name] = "no scale cases: the oracle has no sampled reference for this op";
    return;
  }
  const double share = scale_share_for(opt.scale, impl.device);
  cov.shares[device_name(impl.device)] = share;
  if (share <= 0) return;
  const ScaleLimits& l = limits.get(impl.device, opt.scale);
  if (!l.past_2_31_note.empty()) cov.notes[device_name(impl.device)] = l.past_2_31_note;
  if (!has_scale_version(property)) return;  // (error_inputs, eager_exact)
  share_ = share;
  limits_ = &l;
}

ScaleCheckOptions ScaleTierPair::check_options(int64_t draw) const {
  ScaleCheckOptions so;
  so.memory_bytes = limits_->memory_bytes;
  so.repeat_runs = opt_.scale.repeat_runs;
  so.stress_seed = opt_.seed ^ uint64_t(draw);
  return so;
}

void ScaleTierPair::abandon() {
  {
    const std::lock_guard<std::mutex> lock(m_);
    abandoned_ = true;
  }
  turn_changed_.notify_all();
}

void ScaleTierPair::cut_after(int64_t position) {
  {
    const std::lock_guard<std::mutex> lock(m_);
    cut_ = std::min(cut_, position);
  }
  turn_changed_.notify_all();
}

ScaleSlotRun ScaleTierPair::run(int64_t ordinal, int64_t position, double allowance) {
  ScaleSlotRun r;
  r.allowance = allowance;
  if (!limits_) return r;
  {
    std::unique_lock<std::mutex> lock(m_);
    turn_changed_.wait(lock, [&] { return turn_ == ordinal || abandoned_ || position > cut_; });
    if (abandoned_ || position > cut_) return r;  // (so is every later slot: their positions are higher)
    r.draw = next_draw_;
  }
  struct PassTurn {  // also when a check throws: the next slot's worker waits for it
    ScaleTierPair& t;
    const ScaleSlotRun& r;
    ~PassTurn() {
      {
        const std::lock_guard<std::mutex> lock(t.m_);
        t.next_draw_ = r.draw + 1;
        ++t.turn_;
      }
      t.turn_changed_.notify_all();
    }
  } pass{*this, r};
  static std::mutex one_at_a_time;  // a scale case may hold most of the device's memory
  const std::lock_guard<std::mutex> one(one_at_a_time);
  auto stop = [&] { return opt_.stop_requested && opt_.stop_requested(); };
  const auto slot_t0 = Clock::now();
  const std::string who = impl_.label();
  // With a time allowance: nothing measured yet for this implementation, the
  // smallest of the first draws runs, to measure its rate (a wrong guess then
  // costs one small case); after that, the first draw whose estimate fits.
  const bool probing = allowance >= 0 && !cost_.measured(who);
  const bool batched = property_info(property_).plans != PlanNeed::none;  // it runs a batch plan
  auto case_parts = [&](const ScaleCase& c) {
    int64_t parts = 0;
    if (batched && c.plan)
      for (const auto& b : c.plan->batches) parts += !b.empty();
    return parts;
  };
  int tried = 0;
  std::optional<std::pair<int64_t, ScaleSpec>> smallest;
  for (;; ++r.draw) {  // a draw that does not run hands on to the next, as the serial loop did
    if (stop()) return r;
    const auto t0 = Clock::now();
    ScaleSkipRecord rec;  // what a skip records of this draw
    auto skip = [&](const std::string& why) {
      r.skipped.push_back(why);
      r.skipped_seconds += since(t0);
      rec.why = why;
      r.skipped_draws.push_back(rec);
    };
    ScaleCase c;
    double estimate = 0;
    std::string source;
    try {
      std::optional<ScaleSpec> spec;
      if (allowance < 0) {
        spec = draw_scale_case(*impl_.op, opt_.seed, property_, r.draw, *limits_);
      } else {
        ++tried;
        const bool in_time = since(slot_t0) < allowance;
        // The shape decides; only a draw that runs is finished (its plan and
        // index cost seconds at millions of rows).
        // (A plan's batches are drawn after its shape: 64, or one a row, here.)
        const auto parts_bound = [&](const ScaleSpec& s) { return batched ? std::min(kMaxSplitParts, s.rows) : 0; };
        auto units = [&](const ScaleSpec& s) {
          return scale_cost_units(*s.op, impl_.device, s.rows, s.dim, s.gates, parts_bound(s));
        };
        if (probing) {
          spec = draw_scale_case_if(*impl_.op, opt_.seed, property_, r.draw, *limits_, [&](const ScaleSpec& s) {
            if (!smallest || units(s) < units(smallest->second)) smallest.emplace(r.draw, s);
            return false;
          });
          if (tried < kScaleProbeDraws && in_time) {
            r.skipped_seconds += since(t0);  // not counted as skipped: a later slot draws it again
            continue;
          }
          r.draw = smallest->first;
          smallest.reset();  // should it not run (out of memory), the next ones are probed afresh
          tried = 0;
          spec = draw_scale_case(*impl_.op, opt_.seed, property_, r.draw, *limits_);
        } else {
          spec = draw_scale_case_if(*impl_.op, opt_.seed, property_, r.draw, *limits_, [&](const ScaleSpec& s) {
            rec.shape = spec_shape(s);
            rec.units = units(s);
            rec.parts = parts_bound(s);
            rec.estimate = cost_.estimate_seconds(who, property_, impl_.device, rec.units, rec.parts, &rec.rate_source);
            rec.expected_wait = cost_.expected_wait(who);
            rec.left = allowance - since(slot_t0);
            return rec.estimate + rec.expected_wait <= rec.left;
          });
          if (!spec) {
            skip("estimated to take more than the share left");  // it would eat the next share
            if (tried < kScaleDrawsToFit && in_time) continue;
            r.nothing_fits = true;
            return r;
          }
        }
      }
      rec.shape = spec_shape(*spec);
      c = make_scale_case(*spec);
      r.parts = case_parts(c);
      r.units = scale_cost_units(c.op(), impl_.device, c.rows, c.dim, c.gates, r.parts);
      if (allowance >= 0) {
        estimate = cost_.estimate_seconds(who, property_, impl_.device, r.units, r.parts, &source);
        r.expected_wait = cost_.expected_wait(who);
      }
    } catch (const std::invalid_argument& e) {  // a draw the ladder should never make
      skip(std::string("bad draw: ") + e.what());
      continue;
    }
    Verdict v;
    ScaleCallTimes times;  // its calls' times: what its parts took of their own
    {
      const DeviceGate::Exclusive alone(device_gate(impl_.device, opt_.scale.alone_on_cpu));
      r.waited = alone.seconds_waited();  // for the small cases under way (device_gate.h): not the case's cost
      cost_.record_wait(who, r.waited);
      const AfterRunGuard after{opt_};
      if (opt_.before_scale_run) opt_.before_scale_run(impl_, property_, c);
      try {
        ScaleCheckOptions so = check_options(r.draw);
        so.times = &times;
        v = check_scale_property(property_, impl_, c, so);
      } catch (const ScaleNoMemory&) {
        skip(std::string("out of memory (") + device_name(impl_.device) + ")");
        continue;
      } catch (const std::runtime_error& e) {  // the harness's own calls failed (the implementation's come back as Status)
        skip(std::string("harness error: ") + e.what());
        continue;
      }
    }
    if (stop()) return r;  // its call may have been cut short
    r.seconds = since(t0);
    if (!cost_.warm_up(who)) cost_.record(who, property_, r.units, r.parts, r.seconds - r.waited, times.parts_own_seconds());
    r.estimate = estimate;
    r.rate_source = source;
    r.ran = true;
    r.c = std::move(c);
    r.verdict = std::move(v);
    return r;
  }
}

FailureReport ScaleTierPair::report(const ScaleSlotRun& r, double found_after) const {
  FailureReport f;
  f.scale_original = r.c;
  f.seconds_to_find = found_after;
  f.verdict = r.verdict;
  f.scale_shrunk = r.c;
  // A sticky CUDA error leaves nothing to shrink with in this process, and a
  // shrink budget of 0 asks for none (the scale shrinker reads 0 as no
  // limit): the case as drawn is kept (gatecheck repro replays it in a fresh
  // process), its shrink cut short.
  f.shrink_cut_short = true;
  if (opt_.max_shrink_seconds > 0 && scale_device_usable(impl_.device)) {
    std::function<void(const ScaleCase&)> before;
    if (opt_.before_scale_run) before = [&](const ScaleCase& cand) { opt_.before_scale_run(impl_, property_, cand); };
    const ScaleShrinkResult sh = shrink_scale_case(impl_, property_, r.c, r.verdict, check_options(r.draw), nullptr,
                                                   opt_.max_shrink_seconds, opt_.stop_requested, before);
    if (opt_.after_run) opt_.after_run();
    f.verdict = sh.verdict;
    f.shrink_steps = sh.steps;
    f.shrink_cut_short = sh.cut_short;
    if (sh.small) {
      f.shrunk = *sh.small;
      f.scale_shrunk.reset();
    } else {
      f.scale_shrunk = sh.minimal;
    }
  }
  f.claimed = breaks_claim(f.verdict, impl_.contract, f.scale_shrunk ? f.scale_shrunk->dtype : f.shrunk.dtype);
  return f;
}

std::string describe_found_case(const FailureReport& f) {
  return f.scale_original ? describe(*f.scale_original) : describe(f.original);
}

FailureShape failure_shape(const FailureReport& f) {
  if (f.scale_shrunk) return {f.scale_shrunk->dtype, f.scale_shrunk->rows, f.scale_shrunk->dim, f.scale_shrunk->gates};
  return {f.shrunk.dtype, f.shrunk.rows, f.shrunk.dim, f.shrunk.gates};
}

}  // namespace gatecheck
