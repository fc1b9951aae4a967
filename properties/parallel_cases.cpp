#include "parallel_cases.h"

#include <rapidcheck/GenerationFailure.h>

#include <atomic>
#include <map>
#include <mutex>
#include <vector>

namespace gatecheck {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// What coverage counts of a case, kept until it is known whether the case counts.
struct Drawn {
  int64_t index;
  std::string pattern, dtype, value, plan;
  std::vector<std::string> sizes;
};

Drawn drawn(int64_t index, const Case& c) {
  return {index, c.index_pattern.empty() ? "(none)" : c.index_pattern, dtype_name(c.dtype),
          c.value_class.empty() ? "(none)" : c.value_class, c.plan ? c.plan->kind : "(default)", size_classes(c)};
}

void count(Coverage& cov, const Drawn& d) {
  ++cov.patterns[d.pattern];
  ++cov.dtypes[d.dtype];
  for (const auto& s : d.sizes) ++cov.sizes[s];
  ++cov.values[d.value];
  ++cov.plans[d.plan];
}

bool stop_requested(const CheckOptions& opt) { return opt.stop_requested && opt.stop_requested(); }

}  // namespace

PairCases run_pair_cases(CheckWorkers& workers, const Subject& impl, const std::string& property,
                         const CheckOptions& opt, int64_t max_cases, double slice_seconds, Clock::time_point start,
                         const std::function<void(int64_t)>& tick) {
  CaseSlots slots(opt.seed, property, opt.tier_of);
  PropertyOptions popt;
  popt.isolate = opt.isolate;
  popt.isolate_timeout_seconds = opt.isolate_timeout_seconds;
  const int n = workers.size();
  std::vector<std::vector<Drawn>> done(size_t(n), std::vector<Drawn>{});
  std::vector<StageTimes> stages(static_cast<size_t>(n));
  std::vector<double> busy(size_t(n), 0.0);
  std::atomic<int64_t> completed{0};
  std::mutex m;  // guards the three below
  std::optional<FoundFailure> claimed, unclaimed;
  bool interrupted = false;
  auto stop = [&] {
    {
      const std::lock_guard<std::mutex> lock(m);
      interrupted = true;
    }
    slots.close();
  };

  auto cases = [&](int w) {
    std::map<int, rc::Gen<Case>> gens;  // by tier, this worker's own
    for (;;) {
      if (stop_requested(opt)) {
        stop();
        break;
      }
      std::optional<CaseSlot> slot = slots.next(max_cases, slice_seconds, start);
      if (!slot) break;
      std::optional<rc::Shrinkable<Case>> gs;
      Case c;
      {
        const StageTimer t(Stage::generate);
        auto g = gens.find(slot->tier);
        if (g == gens.end()) g = gens.emplace(slot->tier, gen_case_for_tier(property, opt.limits, slot->tier)).first;
        try {
          gs = g->second(slot->random, slot->size);
        } catch (const rc::GenerationFailure&) {
          continue;  // the vacuity filter found no usable case at this size
        }
        c = gs->value();
      }
      Verdict v;
      {
        struct AfterRun {  // also when the check throws
          const CheckOptions& o;
          ~AfterRun() {
            if (o.after_run) o.after_run();
          }
        } after{opt};
        {
          const StageTimer t(Stage::bookkeeping);
          if (opt.before_run) opt.before_run(impl, property, c);
        }
        v = check_property(property, impl, c, popt);
      }
      if (stop_requested(opt)) {  // this case's call may have been cut short by the stop itself
        stop();
        break;
      }
      const StageTimer t(Stage::bookkeeping);
      done[size_t(w)].push_back(drawn(slot->index, c));
      ++completed;
      if (v.passed) continue;
      const bool breaks = breaks_claim(v, impl.contract, c.dtype);
      const std::lock_guard<std::mutex> lock(m);
      std::optional<FoundFailure>& best = breaks ? claimed : unclaimed;
      if (best && best->slot.index < slot->index) continue;
      best.emplace(FoundFailure{*slot, *gs, std::move(c), std::move(v), breaks, since(start)});
      if (breaks) slots.cut_after(slot->index);
    }
  };
  auto job = [&](int w) {
    const StageTimes before = thread_stage_times();
    const auto started = Clock::now();
    try {
      cases(w);
    } catch (...) {
      slots.close();  // the run ends with this error (CheckWorkers::run rethrows it): the others stop too
      throw;
    }
    stages[size_t(w)] = thread_stage_times() - before;
    busy[size_t(w)] = since(started);
  };
  workers.run(job, [&] { tick(completed.load()); }, 0.1);
  tick(completed.load());

  PairCases r;
  r.interrupted = interrupted;
  const int64_t cutoff = claimed ? claimed->slot.index : INT64_MAX;
  for (const auto& list : done)
    for (const Drawn& d : list)
      if (d.index <= cutoff) {
        ++r.cases;
        count(r.coverage, d);
      }
  if (claimed) r.failure = std::move(claimed);
  else if (unclaimed) r.failure = std::move(unclaimed);
  for (int w = 0; w < n; ++w) {
    r.stages += stages[size_t(w)];
    r.worker_seconds += busy[size_t(w)];
  }
  return r;
}

}  // namespace gatecheck
