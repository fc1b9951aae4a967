// run_check: seeded generation through RapidCheck generators, a time/case
// budget split across implementation x property, shrinking through the
// RapidCheck shrink tree, and RapidCheck-encoded reproduce strings.
#include "check_engine.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <unordered_map>

#include <rapidcheck/GenerationFailure.h>
#include <rapidcheck/detail/Configuration.h>
#include <rapidcheck/detail/Results.h>

#include "../../case/fnv1a.h"
#include "case_slots.h"
#include "check_workers.h"
#include "../generate/generation_limits.h"
#include "parallel_cases.h"
#include "scale_check.h"

// RapidCheck's own reproduce-string codec (what RC_PARAMS="reproduce=..."
// carries). Defined in librapidcheck (src/detail/ReproduceListener and
// Configuration), but not in its installed headers.
namespace rc::detail {
std::string reproduceMapToString(const std::unordered_map<std::string, Reproduce>& map);
std::unordered_map<std::string, Reproduce> stringToReproduceMap(const std::string& str);
}  // namespace rc::detail

namespace gatecheck {

bool CheckReport::any_claimed_failure() const {
  for (const auto& r : results)
    if (r.failure && r.failure->claimed) return true;
  return false;
}

bool CheckReport::any_inconclusive() const {
  for (const auto& r : results)
    if (r.inconclusive()) return true;
  return false;
}

namespace {
// "" for the default shape limits, else "/rows<=R,dim<=D,gates<=G", then
// ",no-h3-dims" and each minimum that is not 0 (",rows>=R", ...).
std::string limits_suffix(const GenLimits& l) {
  const GenLimits d;
  if (l.max_rows == d.max_rows && l.max_dim == d.max_dim && l.max_gates == d.max_gates && l.big_dims == d.big_dims &&
      l.big_dim_max == d.big_dim_max && l.min_rows == d.min_rows && l.min_dim == d.min_dim && l.min_gates == d.min_gates)
    return "";
  return "/rows<=" + std::to_string(l.max_rows) + ",dim<=" + std::to_string(l.max_dim) +
         ",gates<=" + std::to_string(l.max_gates) + (l.big_dims ? "" : ",no-h3-dims") +
         // (a wide-dim cap that --max-dim set is named by dim<= already)
         (l.big_dim_max != d.big_dim_max && l.big_dim_max != l.max_dim ? ",wide<=" + std::to_string(l.big_dim_max) : "") +
         (l.min_rows != d.min_rows ? ",rows>=" + std::to_string(l.min_rows) : "") +
         (l.min_dim != d.min_dim ? ",dim>=" + std::to_string(l.min_dim) : "") +
         (l.min_gates != d.min_gates ? ",gates>=" + std::to_string(l.min_gates) : "");
}
}  // namespace

std::string reproduce_key(const Subject& impl, const std::string& property, const GenLimits& limits) {
  // Every op but gate_residual (whose keys predate the others) leads with its name.
  const std::string op = impl.op == &gate_residual_schema() ? "" : std::string(impl.op->name) + "/";
  return op + impl.label() + "/" + property + limits_suffix(limits);
}

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

void count(Coverage& cov, const Case& c) {
  ++cov.patterns[c.index_pattern.empty() ? "(none)" : c.index_pattern];
  ++cov.dtypes[dtype_name(c.dtype)];
  for (const auto& s : size_classes(c)) ++cov.sizes[s];
  if (c.dim >= kWideDimCounted) ++cov.wide_dims[c.dim];
  ++cov.values[c.value_class.empty() ? "(none)" : c.value_class];
  ++cov.plans[c.plan ? c.plan->kind : "(default)"];
}

void add(Coverage& to, const Coverage& from) {
  for (auto [t, f] : {std::make_pair(&to.patterns, &from.patterns), std::make_pair(&to.dtypes, &from.dtypes),
                      std::make_pair(&to.sizes, &from.sizes), std::make_pair(&to.values, &from.values),
                      std::make_pair(&to.plans, &from.plans)})
    for (const auto& kv : *f) (*t)[kv.first] += kv.second;
  for (const auto& [dim, n] : from.wide_dims) to.wide_dims[dim] += n;
  to.scale.add(from.scale);
}

// The cores shared out for a run's workers, and given back after it.
struct ParallelCalls {
  explicit ParallelCalls(int jobs) { prepare_parallel_calls(jobs); }
  ~ParallelCalls() { prepare_parallel_calls(1); }
};

PropertyOptions popt(const CheckOptions& o) {
  PropertyOptions p;
  p.isolate = o.isolate;
  p.isolate_timeout_seconds = o.isolate_timeout_seconds;
  return p;
}

struct Shrunk {
  rc::Shrinkable<Case> at;
  Verdict verdict;
  std::vector<size_t> path;
  bool cut_short = false;  // ended by the budget or a stop, not at a case none of whose children fails
};

bool stop_requested(const CheckOptions& opt) { return opt.stop_requested && opt.stop_requested(); }
// Past its slice by more than this, with no case named for it, a pair says so.
constexpr double kUnexplainedPast = 0.25;

// Greedy descent of the shrink tree: take the first child on which the same
// property still fails (still breaking a claim if the original did). The
// candidates' error_inputs probes are not named one by one; the minimal
// case's are (PropertyOptions::name_probes).
Shrunk shrink(const Subject& impl, const std::string& property, const rc::Shrinkable<Case>& start,
              const Verdict& v0, bool claimed, const CheckOptions& opt) {
  Shrunk s{start, v0, {}};
  PropertyOptions quick = popt(opt);
  quick.name_probes = false;
  const auto t0 = Clock::now();
  bool progress = true;
  while (progress) {
    if (since(t0) >= opt.max_shrink_seconds || stop_requested(opt)) {
      s.cut_short = bool(s.at.shrinks().next());  // a child left untried
      break;
    }
    progress = false;
    auto children = s.at.shrinks();
    size_t k = 0;
    while (auto child = children.next()) {
      if (since(t0) >= opt.max_shrink_seconds || stop_requested(opt)) {
        s.cut_short = true;
        break;
      }
      const Case c = child->value();
      if (!impl.contract.valid.admits(c)) {  // a simpler case its contract refuses stands in for nothing
        ++k;
        continue;
      }
      if (opt.before_run) opt.before_run(impl, property, c);
      Verdict v = check_property(property, impl, c, quick);
      if (opt.after_run) opt.after_run();
      if (stop_requested(opt)) {  // the call may have been cut short by the stop itself
        s.cut_short = true;
        break;
      }
      if (!v.passed && (!claimed || breaks_claim(v, impl.contract, c.dtype))) {
        s.at = *child;
        s.verdict = std::move(v);
        s.path.push_back(k);
        progress = true;
        break;
      }
      ++k;
    }
  }
  if (s.verdict.probes_unnamed && !stop_requested(opt)) {  // name them on the minimal case
    const Case c = s.at.value();
    if (opt.before_run) opt.before_run(impl, property, c);
    s.verdict = with_probes_named(std::move(s.verdict), property, impl, c, popt(opt));
    if (opt.after_run) opt.after_run();
  }
  return s;
}

// Follows a shrink path from a regenerated root.
rc::Shrinkable<Case> follow(rc::Shrinkable<Case> s, const std::vector<size_t>& path) {
  for (size_t k : path) {
    auto children = s.shrinks();
    size_t i = 0;
    bool found = false;
    while (auto child = children.next()) {
      if (i++ == k) {
        s = *child;
        found = true;
        break;
      }
    }
    if (!found) throw std::invalid_argument("reproduce: the shrink path does not fit this generator (other limits?)");
  }
  return s;
}

FailureReport report(const Subject& impl, const std::string& property, const GenLimits& limits,
                     const Case& original, const Shrunk& sh, const rc::Random& random, int size, double found_after) {
  FailureReport f;
  f.original = original;
  f.shrunk = sh.at.value();
  f.verdict = sh.verdict;
  f.claimed = breaks_claim(sh.verdict, impl.contract, f.shrunk.dtype);
  f.seconds_to_find = found_after;
  f.shrink_steps = int(sh.path.size());
  f.shrink_cut_short = sh.cut_short;
  rc::detail::Reproduce r{random, size, sh.path};
  f.reproduce = rc::detail::reproduceMapToString({{reproduce_key(impl, property, limits), r}});
  return f;
}

// A run's time against its budget: since the start, less the time spent
// shrinking, which comes on top of the budget (each failure capped by
// max_shrink_seconds), so that a long shrink takes no later pair's share.
struct BudgetClock {
  Clock::time_point start = Clock::now();
  double shrinking = 0;
  double used() const { return since(start) - shrinking; }
  double left(double budget) const { return std::max(0.0, budget - used()); }
};

class Progress {
 public:
  Progress(const CheckOptions& o, const BudgetClock& clock) : opt_(o), clock_(clock) {}
  void tick(const Subject& impl, const std::string& prop, int64_t cases, int64_t failures, bool force = false) {
    if (!opt_.progress) return;
    const double now = since(clock_.start);
    if (!force && now - last_ < 0.25) return;
    last_ = now;
    CheckProgress p;
    p.impl = impl.label();
    p.property = prop;
    p.cases_done = cases;
    p.elapsed = now;
    p.seconds_left = opt_.seconds > 0 ? clock_.left(opt_.seconds) : 0;
    p.cases_per_second = now > 0 ? double(cases) / now : 0;
    p.failures = failures;
    opt_.progress(p);
  }

 private:
  const CheckOptions& opt_;
  const BudgetClock& clock_;
  double last_ = -1;
};

using ReproduceMap = std::unordered_map<std::string, rc::detail::Reproduce>;

ReproduceMap decode(const std::string& s) {
  try {
    return rc::detail::stringToReproduceMap(s);
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("reproduce: not a reproduce string: ") + e.what());
  }
}

// RC_PARAMS's reproduce entries, all of them (empty if it has none). Parsed
// here rather than read from rc::detail::configuration(), which would print
// and exit(1) on a bad string, and on a good one prints RapidCheck's
// configuration with a random seed that a replay does not use.
ReproduceMap rc_params_reproduce_map() {
  const char* env = std::getenv("RC_PARAMS");
  if (!env || !std::strstr(env, "reproduce")) return {};
  try {
    return rc::detail::configFromString(env).reproduce;
  } catch (const rc::detail::ConfigurationException& e) {
    throw std::invalid_argument(std::string("RC_PARAMS: ") + e.what());
  }
}

// The keys of `all` that name a pair of this run.
std::vector<std::string> keys_run_here(const ReproduceMap& all, const std::vector<Subject>& impls,
                                       const CheckOptions& opt) {
  std::vector<std::string> keys;
  for (const auto& impl : impls)
    for (const auto& p : opt.properties)
      if (std::string key = reproduce_key(impl, p, generation_limits(impl, opt.limits)); all.count(key))
        keys.push_back(std::move(key));
  return keys;
}

// Throws if `all` replays a pair of this run under other generator limits:
// following that shrink path here would replay some other case, and likely pass.
void refuse_other_limits(const ReproduceMap& all, const std::vector<Subject>& impls, const CheckOptions& opt) {
  auto limits_text = [](const std::string& suffix) { return suffix.empty() ? std::string("the defaults") : suffix.substr(1); };
  for (const auto& impl : impls)
    for (const auto& p : opt.properties) {
      const std::string pair = reproduce_key(impl, p, GenLimits{});  // the key's part before the limits
      for (const auto& kv : all)
        if (kv.first == pair || kv.first.rfind(pair + "/", 0) == 0)
          throw std::invalid_argument("RC_PARAMS: the reproduce string for " + pair + " was made with generator limits " +
                                      limits_text(kv.first.substr(pair.size())) + ", this run has " +
                                      limits_text(limits_suffix(opt.limits)) +
                                      ": replay it with that run's --max-rows, --max-dim, --max-gates and --min-*");
    }
}

// RC_PARAMS's reproduce entries if one names a pair of this run (empty if none).
ReproduceMap from_rc_params(const std::vector<Subject>& impls, const CheckOptions& opt) {
  const ReproduceMap all = rc_params_reproduce_map();
  if (all.empty() || !keys_run_here(all, impls, opt).empty()) return all;
  refuse_other_limits(all, impls, opt);
  std::string named;
  for (const auto& kv : all) named += (named.empty() ? "" : ", ") + kv.first;
  std::fprintf(stderr, "gatecheck: note: RC_PARAMS reproduces %s, none of the implementation x property pairs run "
                       "here; this is an ordinary run\n", named.c_str());
  return {};
}

CheckReport run_reproduce(const std::vector<Subject>& impls, const CheckOptions& opt, const ReproduceMap& map) {
  CheckReport rep;
  rep.seed = opt.seed;
  const auto start = Clock::now();
  for (const auto& impl : impls)
    for (const auto& property : opt.properties) {
      const GenLimits limits = generation_limits(impl, opt.limits);
      auto it = map.find(reproduce_key(impl, property, limits));
      if (it == map.end()) continue;
      const auto& r = it->second;
      const auto t0 = Clock::now();
      const rc::Shrinkable<Case> s = follow(gen_case_for(property, limits)(r.random, r.size), r.shrinkPath);
      const Case c = s.value();
      count(rep.coverage, c);
      if (opt.before_run) opt.before_run(impl, property, c);
      PropertyResult pr;
      pr.impl = impl.name;
      pr.device = impl.device;
      pr.property = property;
      pr.claimed = claimed_for_some_dtype(impl.contract, property, {c.dtype});
      pr.cases = 1;
      pr.case_floor = 1;  // a replay runs the one case it encodes
      Verdict v = check_property(property, impl, c, popt(opt));
      if (opt.after_run) opt.after_run();
      if (!v.passed) {
        pr.passed = false;
        pr.failure = report(impl, property, limits, c, Shrunk{s, v, r.shrinkPath}, r.random, r.size, since(t0));
      }
      pr.seconds = since(t0);
      rep.results.push_back(std::move(pr));
    }
  if (rep.results.empty())
    throw std::invalid_argument("reproduce: the string names none of the implementation x property pairs run here");
  rep.seconds = since(start);
  return rep;
}

}  // namespace

std::vector<std::string> rc_params_replays(const std::vector<Subject>& impls, const CheckOptions& opt) {
  if (!opt.reproduce.empty() || !opt.rc_params_reproduce) return {};
  const ReproduceMap all = rc_params_reproduce_map();
  std::vector<std::string> keys = keys_run_here(all, impls, opt);
  if (keys.empty() && !all.empty()) refuse_other_limits(all, impls, opt);
  return keys;
}

bool claimed_for_some_dtype(const Contract& k, const std::string& property, const std::vector<DType>& dtypes) {
  for (DType t : dtypes)
    if (k.claims_any_part(property, t)) return true;
  return false;
}

CheckReport run_check(const std::vector<Subject>& impls, const CheckOptions& opt) {
  if (!opt.reproduce.empty()) return run_reproduce(impls, opt, decode(opt.reproduce));
  if (opt.rc_params_reproduce) {
    const ReproduceMap m = from_rc_params(impls, opt);
    if (!m.empty()) return run_reproduce(impls, opt, m);
  }
  for (const auto& p : opt.properties)
    if (!is_property(p)) throw std::invalid_argument(unknown_property(p));
  CheckReport rep;
  rep.seed = opt.seed;
  rep.jobs = std::max(1, opt.jobs);
  BudgetClock clock;
  const auto start = clock.start;
  Progress progress(opt, clock);
  const int64_t max_cases = opt.max_cases > 0 ? opt.max_cases : (opt.seconds > 0 ? 0 : kCasesWithoutBudget);
  int64_t total_cases = 0, failures = 0;
  const size_t pairs = impls.size() * opt.properties.size();
  size_t pair = 0;
  const ParallelCalls parallel(rep.jobs);
  CheckWorkers workers(rep.jobs);
  ScaleLimitsCache scale_limits;  // the scale tier's limits per device, fixed at first use
  ScaleCostModel scale_cost;      // what scale cases have cost so far in this run
  for (const auto& impl : impls)
    for (const auto& property : opt.properties) {
      if (rep.interrupted || rep.stopped_on_failure) break;
      // Its even share of the budget (negative: no time budget), or of what is
      // left when earlier pairs left some: a pair that ran over eats no other's.
      const double slice =
          opt.seconds > 0 ? std::max(opt.seconds / double(pairs), clock.left(opt.seconds) / double(pairs - pair)) : -1;
      ++pair;
      const auto t0 = Clock::now();
      PropertyResult pr;
      pr.impl = impl.name;
      pr.device = impl.device;
      pr.property = property;
      const GenLimits limits = generation_limits(impl, opt.limits);  // within its contract's valid inputs
      pr.claimed = claimed_for_some_dtype(impl.contract, property, limits.dtypes);
      // The scale tier (scale_check.h, pair_schedule.h): a share of the pair's
      // cases (with a case budget) or else time (with a time budget) goes to cases
      // drawn at scale; scale draw j is draw_scale_case(seed, property, j),
      // from its own stream, so small case k is the same with the tier on or
      // off. Scale cases count towards the case budget.
      ScaleTierPair scale(opt, scale_limits, scale_cost, impl, property, rep.coverage.scale);
      PairCases run = run_pair_cases(workers, impl, property, limits, scale, opt, max_cases, slice, t0,
                                     [&](int64_t done) { progress.tick(impl, property, total_cases + done, failures); });
      rep.interrupted = run.interrupted;
      pr.cases = run.cases;
      pr.case_floor = max_cases > 0 ? std::min(kCaseFloor, max_cases) : kCaseFloor;
      total_cases += run.cases;
      pr.stages = run.stages;
      pr.worker_seconds = run.worker_seconds;
      pr.overruns = run.overruns;
      pr.scale_runs = run.scale_runs;
      pr.scale_skipped = run.scale_skipped;
      // Time past the slice that no case accounts for is the engine's own: said too.
      if (const double past = since(t0) - slice; slice >= 0 && run.overruns.empty() && past > kUnexplainedPast) {
        char buf[120];
        std::snprintf(buf, sizeof buf, "%.2f s past the property's %.2f s slice, in no case's time", past, slice);
        pr.overruns.push_back(buf);
      }
      add(rep.coverage, run.coverage);
      if (run.failure) {  // shrunk here, serially (a stop leaves it as found)
        const auto shrink_t0 = Clock::now();
        const FoundFailure& f = *run.failure;
        if (f.scale) {
          pr.failure = scale.report(*f.scale, f.found_after);
        } else {
          const Shrunk sh = shrink(impl, property, *f.shrinkable, f.verdict, f.claimed, opt);
          pr.failure = report(impl, property, limits, f.c, sh, f.slot.random, f.slot.size, f.found_after);
        }
        pr.passed = false;
        ++failures;
        clock.shrinking += since(shrink_t0);
        progress.tick(impl, property, total_cases, failures, true);
      }
      pr.seconds = since(t0);
      rep.stopped_on_failure = opt.stop_on_failure && pr.failure && pr.failure->claimed;
      rep.results.push_back(std::move(pr));
    }
  rep.seconds = since(start);
  return rep;
}

}  // namespace gatecheck
