#include "parallel_cases.h"

#include <rapidcheck/GenerationFailure.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "device_gate.h"
#include "pair_schedule.h"

namespace gatecheck {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// What coverage counts of a case, kept until it is known whether the case
// counts; index is its position in the pair.
struct Drawn {
  int64_t index;
  std::string pattern, dtype, value, plan;
  std::vector<std::string> sizes;
  int64_t dim;
};

Drawn drawn(int64_t index, const Case& c) {
  return {index, c.index_pattern.empty() ? "(none)" : c.index_pattern, dtype_name(c.dtype),
          c.value_class.empty() ? "(none)" : c.value_class, c.plan ? c.plan->kind : "(default)", size_classes(c),
          c.dim};
}

void count(Coverage& cov, const Drawn& d) {
  ++cov.patterns[d.pattern];
  ++cov.dtypes[d.dtype];
  for (const auto& s : d.sizes) ++cov.sizes[s];
  if (d.dim >= kWideDimCounted) ++cov.wide_dims[d.dim];
  ++cov.values[d.value];
  ++cov.plans[d.plan];
}

// The same for a scale slot: the case that ran and the draws that did not.
struct ScaleDone {
  int64_t position;
  ScaleCoverage coverage;
  std::optional<ScaleRunRecord> record;  // the case that ran
  std::vector<ScaleSkipRecord> skipped;   // the draws that did not
};

// A scale case past its time by more than this is reported.
constexpr double kOverrunNoted = 0.05;

std::string overrun_text(const ScaleSlotRun& r) {
  char buf[384], wait[80] = "", expected[64] = "";
  if (r.waited >= 0.01)
    std::snprintf(wait, sizeof wait, ", %.2f s of it waiting for the small cases under way", r.waited);
  if (r.expected_wait >= 0.01) std::snprintf(expected, sizeof expected, ", and %.2f s of waiting", r.expected_wait);
  std::snprintf(buf, sizeof buf, ": %.2f s%s, %.2f s past the %.2f s its share had left (estimated %.2f s from %s%s)",
                r.seconds + r.skipped_seconds, wait, r.seconds + r.skipped_seconds - r.allowance, r.allowance, r.estimate,
                r.rate_source.c_str(), expected);
  return "scale case " + describe(r.c) + ", " + std::to_string(r.c.elements()) + " elements" + buf;
}

// A small case that ends past the pair's slice is reported too, with its own
// time (its generation included): a budget overrun is never left unexplained.
std::string small_overrun_text(const Case& c, double took, double past) {
  char buf[120];
  std::snprintf(buf, sizeof buf, ": %.2f s, ending %.2f s past the property's slice", took, past);
  return "case " + describe(c) + buf;
}
bool stop_requested(const CheckOptions& opt) { return opt.stop_requested && opt.stop_requested(); }

// The device hold of the small case this worker thread checks, which a
// property gives back once its calls are over (PropertyOptions::device_done);
// null elsewhere (a scale case, shrinking on the calling thread).
thread_local std::optional<DeviceGate::Shared>* current_hold = nullptr;
struct HoldInScope {
  explicit HoldInScope(std::optional<DeviceGate::Shared>* h) { current_hold = h; }
  ~HoldInScope() { current_hold = nullptr; }
};

}  // namespace

PairCases run_pair_cases(CheckWorkers& workers, const Subject& impl, const std::string& property,
                         const GenLimits& limits, ScaleTierPair& scale, const CheckOptions& opt, int64_t max_cases,
                         double slice_seconds, Clock::time_point start, const std::function<void(int64_t)>& tick) {
  CaseSlots small(opt.seed, property, opt.tier_of);
  // With a case budget the scale tier's share is one of cases, even under a
  // time budget too: which slots are scale cases, and that each runs, must not
  // hang on the machine's speed (else --cases N --seed S ran N cases on an idle
  // machine and fewer on a busy one).
  PairSchedule slots(small, scale.share(), slice_seconds >= 0 && max_cases <= 0);
  PropertyOptions popt;
  popt.isolate = opt.isolate;
  popt.isolate_timeout_seconds = opt.isolate_timeout_seconds;
  popt.device_done = [] {
    if (current_hold) current_hold->reset();
  };
  const int n = workers.size();
  std::vector<std::vector<Drawn>> done(size_t(n), std::vector<Drawn>{});
  std::vector<std::vector<ScaleDone>> scale_done(size_t(n), std::vector<ScaleDone>{});
  std::vector<StageTimes> stages(static_cast<size_t>(n));
  std::vector<double> busy(size_t(n), 0.0);
  std::atomic<int64_t> completed{0};
  // Under a case budget, a draw that found no usable case (the vacuity
  // filter) is not a case: another slot takes its place, up to a bound, so
  // that --cases N runs N cases where the generator can make them.
  std::atomic<int64_t> unusable{0};
  const auto case_budget = [&]() -> int64_t {
    return max_cases > 0 ? max_cases + std::min<int64_t>(unusable.load(), 4 * max_cases + 16) : 0;
  };
  std::mutex m;  // guards the four below
  std::optional<FoundFailure> claimed, unclaimed;
  std::vector<std::string> overruns;
  bool interrupted = false;
  auto stop = [&] {
    {
      const std::lock_guard<std::mutex> lock(m);
      interrupted = true;
    }
    slots.close();
    scale.abandon();
  };
  // A failure at `position`: kept if it is the lowest of its kind so far.
  auto found = [&](FoundFailure f) {
    const std::lock_guard<std::mutex> lock(m);
    std::optional<FoundFailure>& best = f.claimed ? claimed : unclaimed;
    if (best && best->position < f.position) return;
    if (f.claimed) {
      slots.cut_after(f.position);
      scale.cut_after(f.position);
    }
    best.emplace(std::move(f));
  };

  // A scale slot on worker w; false once the worker should stop.
  auto scale_slot = [&](int w, const PairSlot& slot) {
    ScaleSlotRun run = scale.run(slot.scale_ordinal, slot.position, slot.scale_seconds);
    slots.scale_done(run.seconds + run.skipped_seconds, run.ran, run.nothing_fits);
    if (run.ran && run.allowance >= 0 && run.seconds + run.skipped_seconds > run.allowance + kOverrunNoted) {
      const std::lock_guard<std::mutex> lock(m);
      overruns.push_back(overrun_text(run));
    } else if (!run.ran && run.allowance >= 0 && run.skipped_seconds > run.allowance + kOverrunNoted) {
      // Draws that never ran can cost time too (drawing, estimating, a failed allocation).
      char buf[160];
      std::snprintf(buf, sizeof buf, "scale draws that did not run: %.2f s, %.2f s past the %.2f s its share had left",
                    run.skipped_seconds, run.skipped_seconds - run.allowance, run.allowance);
      const std::lock_guard<std::mutex> lock(m);
      overruns.push_back(buf);
    }
    if (stop_requested(opt)) {  // its call may have been cut short by the stop itself
      stop();
      return false;
    }
    ScaleDone d{slot.position, {}, {}, std::move(run.skipped_draws)};
    for (const auto& why : run.skipped) ++d.coverage.skipped[why];
    if (run.ran) {
      d.coverage.add(run.c, run.seconds);
      d.record = ScaleRunRecord{describe(run.c), run.parts,   run.units,  run.allowance,
                                run.estimate,      run.seconds, run.waited, run.expected_wait};
    }
    scale_done[size_t(w)].push_back(std::move(d));
    if (!run.ran) return true;  // abandoned: a claimed failure before it
    ++completed;
    if (run.verdict.passed) return true;
    FoundFailure f;
    f.position = slot.position;
    f.claimed = breaks_claim(run.verdict, impl.contract, run.c.dtype);
    f.found_after = since(start);
    f.scale = std::move(run);
    found(std::move(f));
    return true;
  };

  auto cases = [&](int w) {
    std::map<int, rc::Gen<Case>> gens;  // by tier, this worker's own
    for (;;) {
      if (stop_requested(opt)) {
        stop();
        break;
      }
      std::optional<PairSlot> slot = slots.next(case_budget(), slice_seconds, start);
      if (!slot) break;
      if (slot->scale) {
        if (!scale_slot(w, *slot)) break;
        continue;
      }
      const CaseSlot& cs = slot->small;
      const auto case_t0 = Clock::now();
      std::optional<rc::Shrinkable<Case>> gs;
      Case c;
      {
        const StageTimer t(Stage::generate);
        auto g = gens.find(cs.tier);
        if (g == gens.end()) g = gens.emplace(cs.tier, gen_case_for_tier(property, limits, cs.tier)).first;
        try {
          gs = g->second(cs.random, cs.size);
        } catch (const rc::GenerationFailure&) {  // the vacuity filter found no usable case at this size
          ++unusable;
          const double took = since(case_t0), past = since(start) - slice_seconds;
          if (slice_seconds >= 0 && took > kOverrunNoted && past > kOverrunNoted) {
            char buf[160];
            std::snprintf(buf, sizeof buf, "a draw (tier %d) that found no usable case: %.2f s, ending %.2f s past the property's slice",
                          cs.tier, took, past);
            const std::lock_guard<std::mutex> lock(m);
            overruns.push_back(buf);
          }
          continue;
        }
        c = gs->value();
      }
      if (opt.after_generate) opt.after_generate();
      // The device is held from here, not through the drawing (host work, up to
      // two thirds of a small GPU case), until the property's calls are over
      // (popt.device_done): a scale case waits only for the calls under way.
      // The wait for a scale case is not this case's time.
      std::optional<DeviceGate::Shared> hold;
      if (scale.share() > 0) hold.emplace(device_gate(impl.device, opt.scale.alone_on_cpu));
      const double waited = hold ? hold->seconds_waited() : 0.0;
      Verdict v;
      {
        const AfterRunGuard after{opt};
        {
          const StageTimer t(Stage::bookkeeping);
          if (opt.before_run) opt.before_run(impl, property, c);
        }
        const HoldInScope in_scope(&hold);
        v = check_property(property, impl, c, popt);
      }
      hold.reset();
      if (stop_requested(opt)) {  // this case's call may have been cut short by the stop itself
        stop();
        break;
      }
      const StageTimer t(Stage::bookkeeping);
      if (slice_seconds >= 0) {
        const double took = since(case_t0) - waited, past = since(start) - slice_seconds;
        if (took > kOverrunNoted && past > kOverrunNoted) {
          const std::lock_guard<std::mutex> lock(m);
          overruns.push_back(small_overrun_text(c, took, past));
        }
      }
      done[size_t(w)].push_back(drawn(slot->position, c));
      ++completed;
      if (v.passed) continue;
      FoundFailure f;
      f.position = slot->position;
      f.slot = cs;
      f.shrinkable = std::move(gs);
      f.claimed = breaks_claim(v, impl.contract, c.dtype);
      f.c = std::move(c);
      f.verdict = std::move(v);
      f.found_after = since(start);
      found(std::move(f));
    }
  };
  auto job = [&](int w) {
    const StageTimes before = thread_stage_times();
    const auto started = Clock::now();
    try {
      cases(w);
    } catch (...) {
      // The run ends with this error (CheckWorkers::run rethrows it): the
      // others stop too, and none waits for a scale slot's turn.
      slots.close();
      scale.abandon();
      throw;
    }
    stages[size_t(w)] = thread_stage_times() - before;
    busy[size_t(w)] = since(started);
  };
  workers.run(job, [&] { tick(completed.load()); }, 0.1);
  tick(completed.load());

  PairCases r;
  r.interrupted = interrupted;
  const int64_t cutoff = claimed ? claimed->position : INT64_MAX;
  for (const auto& list : done)
    for (const Drawn& d : list)
      if (d.index <= cutoff) {
        ++r.cases;
        count(r.coverage, d);
      }
  std::vector<std::pair<int64_t, ScaleRunRecord>> records;
  std::vector<std::pair<int64_t, ScaleSkipRecord>> skips;
  for (const auto& list : scale_done)
    for (const ScaleDone& d : list)
      if (d.position <= cutoff) {
        r.cases += d.coverage.cases;
        r.coverage.scale.add(d.coverage);
        if (d.record) records.emplace_back(d.position, *d.record);
        for (const ScaleSkipRecord& k : d.skipped) skips.emplace_back(d.position, k);
      }
  std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [pos, rec] : records) r.scale_runs.push_back(std::move(rec));
  std::stable_sort(skips.begin(), skips.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [pos, k] : skips) r.scale_skipped.push_back(std::move(k));
  r.overruns = std::move(overruns);
  if (claimed) r.failure = std::move(claimed);
  else if (unclaimed) r.failure = std::move(unclaimed);
  for (int w = 0; w < n; ++w) {
    r.stages += stages[size_t(w)];
    r.worker_seconds += busy[size_t(w)];
  }
  return r;
}

}  // namespace gatecheck
