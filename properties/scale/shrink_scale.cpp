#include "shrink_scale.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "../../case/case_spec.h"
#include "../../harness/scale/scale_backend.h"

namespace gatecheck {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kMaxBlocksPerSize = 8;
constexpr int kMaxMerges = 16;

std::vector<int64_t> iota(int64_t a, int64_t b) {
  std::vector<int64_t> v(size_t(std::max<int64_t>(b - a, 0)));
  std::iota(v.begin(), v.end(), a);
  return v;
}

// The current view's gate list and remap, written out even where they are the identity.
void explicit_gates(const ScaleCase& c, std::vector<int64_t>* gates, std::vector<int64_t>* remap) {
  if (!c.view.gates.empty()) {
    *gates = c.view.gates;
    *remap = c.view.remap;
    return;
  }
  *gates = iota(0, c.spec.gates);
  *remap = iota(0, c.spec.gates);
}

bool shares_an_output(const Verdict& a, const Verdict& b) {
  if (a.failed_outputs.empty()) return true;
  for (const auto& o : b.failed_outputs)
    if (std::find(a.failed_outputs.begin(), a.failed_outputs.end(), o) != a.failed_outputs.end()) return true;
  return false;
}

}  // namespace

ScaleView view_keep_rows(const ScaleCase& c, const std::vector<int64_t>& rows) {
  if (rows.empty()) throw std::invalid_argument("view_keep_rows: a scale view keeps at least one row");
  ScaleView v = c.view;
  v.rows.clear();
  for (int64_t r : rows) v.rows.push_back(c.orig_row(r));
  if (int64_t(v.rows.size()) == c.spec.rows) v.rows.clear();  // all of them
  return v;
}

ScaleView view_keep_cols(const ScaleCase& c, const std::vector<int64_t>& cols) {
  if (cols.empty()) throw std::invalid_argument("view_keep_cols: a scale view keeps at least one column");
  ScaleView v = c.view;
  v.cols.clear();
  for (int64_t j : cols) v.cols.push_back(c.orig_col(j));
  if (int64_t(v.cols.size()) == c.spec.dim) v.cols.clear();
  return v;
}

ScaleView view_keep_gates(const ScaleCase& c, const std::vector<bool>& keep, const std::vector<int64_t>& into) {
  std::vector<int64_t> gates, remap;
  explicit_gates(c, &gates, &remap);
  std::vector<int64_t> at(size_t(c.gates), -1);
  ScaleView v = c.view;
  v.gates.clear();
  for (int64_t k = 0; k < c.gates; ++k)
    if (keep[size_t(k)]) {
      at[size_t(k)] = int64_t(v.gates.size());
      v.gates.push_back(gates[size_t(k)]);
    }
  v.remap.assign(remap.size(), -1);
  for (size_t g = 0; g < remap.size(); ++g)
    if (remap[g] >= 0) v.remap[g] = at[size_t(into[size_t(remap[g])])];
  // One gate left: every generated gate maps to it (no kept row uses the
  // others), which a file says in one number (case/scale_json.h).
  if (v.gates.size() == 1) std::fill(v.remap.begin(), v.remap.end(), 0);
  return v;
}

namespace {

class ScaleShrinker {
 public:
  ScaleShrinker(const Subject& impl, const std::string& property, const ScaleCase& c, const Verdict& original,
                const ScaleCheckOptions& o, const ScaleShrinkLog& log, double max_seconds, const ScaleShrinkStop& stop,
                const std::function<void(const ScaleCase&)>& before)
      : impl_(impl), property_(property), original_(original), o_(o), log_(log), stop_(stop), before_(before),
        max_seconds_(max_seconds),
        start_(Clock::now()), cur_(c), last_(original) {
    claimed_ = breaks_claim(original, impl.contract, c.dtype);
  }

  ScaleShrinkResult run() {
    for (bool progress = true; progress && !stopped();) {
      progress = false;
      progress |= pass_axis(true);
      progress |= pass_axis(false);
      progress |= pass_gates();
      progress |= pass_plan();
    }
    ScaleShrinkResult r;
    small_phase(r);
    r.minimal = cur_;
    if (!r.small) r.verdict = last_;
    r.steps += steps_;
    r.attempts += attempts_;
    r.cut_short = r.cut_short || cut_short_;
    r.interrupted = r.interrupted || interrupted_;
    r.seconds = elapsed();
    return r;
  }

 private:
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  bool stopped() {
    if (stop_ && stop_()) interrupted_ = true;
    if (interrupted_ || (max_seconds_ > 0 && elapsed() > max_seconds_)) cut_short_ = true;
    return cut_short_;
  }

  bool same_failure(const Verdict& v, DType t) const {
    if (v.passed || v.vacuous != original_.vacuous || !shares_an_output(original_, v)) return false;
    return !claimed_ || breaks_claim(v, impl_.contract, t);
  }

  bool try_view(const ScaleView& view, const std::string& what) {
    if (stopped()) return false;
    ScaleCase cand;
    try {
      cand = make_scale_case(cur_.spec, view);
    } catch (const std::invalid_argument&) {
      return false;
    }
    if (!exact_values_problem(cand).empty()) return false;  // a merge made a segment too long to stay exact
    ++attempts_;
    if (before_) before_(cand);
    Verdict v;
    try {
      v = check_scale_property(property_, impl_, cand, o_);
    } catch (const std::exception&) {
      return false;  // did not fit, or cannot be judged: not a smaller failure
    }
    if (stop_ && stop_()) {
      interrupted_ = cut_short_ = true;
      return false;
    }
    if (!same_failure(v, cand.dtype)) return false;
    cur_ = std::move(cand);
    last_ = std::move(v);
    ++steps_;
    if (log_) {
      std::ostringstream s;
      s << "shrink step " << steps_ << " (attempt " << attempts_ << "): " << what << " -> " << describe(cur_);
      log_(s.str());
    }
    return true;
  }

  // Rows (true) or columns (false): shortest failing prefix, most leading
  // ones dropped, then blocks.
  bool pass_axis(bool rows) {
    const char* noun = rows ? "rows" : "columns";
    auto count = [&] { return rows ? cur_.rows : cur_.dim; };
    // nothing changed since this pass last found nothing: it would find nothing again
    int64_t& settled = rows ? rows_settled_ : cols_settled_;
    if (settled == cur_.rows * (cur_.dim + 1) + cur_.gates) return false;
    auto keep = [&](const std::vector<int64_t>& k) { return rows ? view_keep_rows(cur_, k) : view_keep_cols(cur_, k); };
    auto label = [&](const char* what, int64_t a, int64_t b) {
      return std::string(what) + " " + noun + " [" + std::to_string(a) + ", " + std::to_string(b) + ")";
    };
    bool any = false;
    // the shortest failing prefix (never empty: an empty view means "all")
    for (int64_t lo = 1, hi = count(); lo < hi && !stopped();) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (try_view(keep(iota(0, mid)), label("kept", 0, mid))) hi = mid, any = true;
      else lo = mid + 1;
    }
    // the most leading ones that can go
    const int64_t n0 = count();
    int64_t dropped = 0;
    for (int64_t lo = 0, hi = n0 - 1; lo < hi && !stopped();) {
      const int64_t mid = lo + (hi - lo + 1) / 2;
      if (try_view(keep(iota(mid - dropped, count())), label("dropped the first", 0, mid))) {
        dropped = lo = mid;
        any = true;
      } else {
        hi = mid - 1;
      }
    }
    // blocks: halves down to 1/16
    const int64_t n1 = count();
    for (int64_t size = n1 / 2; size >= std::max<int64_t>(1, n1 / 16) && !stopped(); size /= 2) {
      const int64_t blocks = (count() + size - 1) / size;
      const int64_t step = std::max<int64_t>(1, blocks / kMaxBlocksPerSize);
      for (int64_t b = 0; b * size < count() && !stopped(); b += step) {
        const int64_t a = b * size, e = std::min(count(), a + size);
        if (e - a >= count()) continue;
        std::vector<int64_t> k = iota(0, a);
        for (int64_t x = e; x < count(); ++x) k.push_back(x);
        if (try_view(keep(k), label("dropped", a, e))) any = true;
      }
    }
    if (!any && !stopped()) settled = cur_.rows * (cur_.dim + 1) + cur_.gates;
    return any;
  }

  bool pass_gates() {
    std::vector<int64_t> used_count(size_t(cur_.gates), 0);
    for (int64_t k : cur_.index) ++used_count[size_t(k)];
    std::vector<int64_t> used;
    for (int64_t k = 0; k < cur_.gates; ++k)
      if (used_count[size_t(k)]) used.push_back(k);
    // Each accepted edit renumbers the gates, so it ends the pass; the next
    // round starts afresh.
    if (int64_t(used.size()) < cur_.gates) {
      std::vector<bool> keep(size_t(cur_.gates), false);
      for (int64_t k : used) keep[size_t(k)] = true;
      if (try_view(view_keep_gates(cur_, keep, iota(0, cur_.gates)),
                   "dropped " + std::to_string(cur_.gates - int64_t(used.size())) + " unused gates"))
        return true;
    }
    if (used.size() < 2 || stopped()) return false;
    // every used gate into the lowest, then one at a time (highest first)
    const int64_t g0 = used.front();
    auto merge = [&](const std::vector<int64_t>& from) {
      std::vector<bool> keep(size_t(cur_.gates), true);
      std::vector<int64_t> into = iota(0, cur_.gates);
      for (int64_t k : from) keep[size_t(k)] = false, into[size_t(k)] = g0;
      for (int64_t k = 0; k < cur_.gates; ++k)
        if (!used_count[size_t(k)]) keep[size_t(k)] = false;  // unused ones go too
      return view_keep_gates(cur_, keep, into);
    };
    if (try_view(merge(std::vector<int64_t>(used.begin() + 1, used.end())),
                 "merged every gate into gate " + std::to_string(g0)))
      return true;
    int tries = 0;
    for (size_t i = used.size() - 1; i >= 1 && tries < kMaxMerges && !stopped(); --i, ++tries)
      if (try_view(merge({used[i]}), "merged gate " + std::to_string(used[i]) + " into gate " + std::to_string(g0)))
        return true;
    return false;
  }

  bool pass_plan() {
    if (!cur_.plan || cur_.view.no_plan) return false;
    // numbers of the drawn plan's batches kept (the spec plan's)
    std::vector<int64_t> numbers = cur_.view.batches;
    if (cur_.view.all_batches) {
      const ScaleCase drawn = make_scale_case(cur_.spec);  // the plan as drawn
      numbers = iota(0, drawn.plan ? int64_t(drawn.plan->batches.size()) : 0);
    }
    if (is_split_kind(cur_.plan->kind)) return fewer_parts(numbers);
    ScaleView v = cur_.view;
    v.no_plan = true;
    if (try_view(v, "dropped the batch plan")) return true;
    if (cur_.plan->batches.size() < 2) return false;
    // one batch of the drawn plan at a time
    int tries = 0;
    for (int64_t b : numbers) {
      if (tries++ >= kMaxMerges || stopped()) break;
      ScaleView one = cur_.view;
      one.all_batches = false;
      one.batches = {b};
      if (try_view(one, "kept only batch " + std::to_string(b) + " of the plan")) return true;
    }
    return false;
  }

  // A split (split_invariance) is kept, so that the file shows it, with fewer
  // parts: each half of them, then all but one (the batch is the rows the
  // parts name; one part alone is vacuous).
  bool fewer_parts(const std::vector<int64_t>& parts) {
    const size_t n = parts.size();
    if (n <= 2) return false;
    auto keep = [&](std::vector<int64_t> kept, const std::string& what) {
      ScaleView v = cur_.view;
      v.all_batches = false;
      v.batches = std::move(kept);
      return try_view(v, what);
    };
    const std::vector<int64_t> first(parts.begin(), parts.begin() + long(n / 2)), second(parts.begin() + long(n / 2), parts.end());
    if (first.size() >= 2 && keep(first, "kept the first " + std::to_string(first.size()) + " of " + std::to_string(n) + " parts"))
      return true;
    if (keep(second, "kept the last " + std::to_string(second.size()) + " of " + std::to_string(n) + " parts")) return true;
    int tries = 0;
    for (size_t i = 0; i < n && tries++ < kMaxMerges && !stopped(); ++i) {
      std::vector<int64_t> rest = parts;
      rest.erase(rest.begin() + long(i));
      if (keep(rest, "dropped part " + std::to_string(parts[i]) + " of the split")) return true;
    }
    return false;
  }

  // Small enough: explicit values, if the ordinary property fails on them the same way.
  void small_phase(ScaleShrinkResult& r) {
    if (stopped() || cur_.elements() > kSmallScaleElements || cur_.gates * cur_.dim > kSmallScaleElements) return;
    try {
      Case m = materialise(cur_);
      Verdict v = check_property(property_, impl_, m);
      if (!same_failure(v, m.dtype)) return;  // e.g. a repeatability failure that needs the stress
      r.small = std::move(m);
      r.verdict = std::move(v);
    } catch (const std::exception&) {
      // the ordinary property cannot judge it: keep the scale case
    }
  }

  const Subject& impl_;
  const std::string& property_;
  const Verdict& original_;
  const ScaleCheckOptions& o_;
  const ScaleShrinkLog& log_;
  const ScaleShrinkStop& stop_;
  const std::function<void(const ScaleCase&)>& before_;
  double max_seconds_;
  Clock::time_point start_;
  ScaleCase cur_;
  Verdict last_;
  bool claimed_ = false;
  int steps_ = 0, attempts_ = 0;
  bool cut_short_ = false, interrupted_ = false;
  int64_t rows_settled_ = -1, cols_settled_ = -1;  // the shape at which that pass last found nothing
};

}  // namespace

ScaleShrinkResult shrink_scale_case(const Subject& impl, const std::string& property, const ScaleCase& c,
                                    const Verdict& original, const ScaleCheckOptions& o, const ScaleShrinkLog& log,
                                    double max_seconds, const ScaleShrinkStop& stop,
                                    const std::function<void(const ScaleCase&)>& before) {
  return ScaleShrinker(impl, property, c, original, o, log, max_seconds, stop, before).run();
}

}  // namespace gatecheck
