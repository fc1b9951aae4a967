// The shrinking search. Passes run in a fixed order (rows, gates, columns,
// batch plan, values) and repeat until none of them makes progress, so the
// same failing case and predicate always give the same steps and result.
// Chunked passes (rows, columns, values) try large chunks first, halving the
// chunk size down to single elements, in the spirit of delta debugging.
#include "shrink.h"

#include <chrono>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "../../case/case_spec.h"
#include "shrink_edits.h"

namespace gatecheck {

namespace {

using Clock = std::chrono::steady_clock;

class Shrinker {
 public:
  Shrinker(const Case& c, const std::function<bool(const Case&)>& still_fails, const ShrinkLog& log,
           double max_seconds, int max_attempts, const ShrinkStop& stop)
      : cur_(c), still_fails_(still_fails), log_(log), stop_(stop), start_(Clock::now()),
        max_seconds_(max_seconds), max_attempts_(max_attempts) {}

  ShrinkResult run() {
    bool progress = true;
    while (progress && !stopped()) {
      progress = false;
      progress |= pass_rows();
      progress |= pass_gates();
      progress |= pass_columns();
      progress |= pass_plan();
      progress |= pass_values();
    }
    ShrinkResult r;
    r.minimal = cur_;
    r.steps = steps_;
    r.attempts = attempts_;
    r.cut_short = cut_short_;
    r.interrupted = interrupted_;
    r.seconds = elapsed();
    return r;
  }

 private:
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  bool stopped() {
    if (stop_ && stop_()) interrupted_ = true;
    if (interrupted_ || (max_seconds_ > 0 && elapsed() > max_seconds_) || (max_attempts_ > 0 && attempts_ >= max_attempts_))
      cut_short_ = true;
    return cut_short_;
  }

  // Tries one candidate; on success it becomes the current case.
  bool accept(Case cand, const std::string& what) {
    if (stopped()) return false;
    ++attempts_;
    bool fails = false;
    try {
      fails = still_fails_(cand);
    } catch (const std::exception&) {
      fails = false;  // a candidate the property cannot judge is not a smaller failure
    }
    if (stop_ && stop_()) {  // its verdict may be the stop's doing
      interrupted_ = cut_short_ = true;
      return false;
    }
    if (!fails) return false;
    cur_ = std::move(cand);
    ++steps_;
    if (log_) {
      std::ostringstream s;
      s << "shrink step " << steps_ << " (attempt " << attempts_ << "): " << what << " -> "
        << describe(cur_);
      log_(s.str());
    }
    return true;
  }

  static std::string range(const char* what, int64_t b, int64_t e) {
    std::ostringstream s;
    if (e - b == 1) s << "dropped " << what << " " << b;
    else s << "dropped " << what << "s [" << b << ", " << e << ")";
    return s.str();
  }

  // Drops chunks of rows (all, halves, quarters, ..., single rows).
  bool pass_rows() {
    bool any = false;
    for (int64_t size = cur_.rows; size >= 1 && !stopped(); size = size == 1 ? 0 : (size + 1) / 2) {
      for (int64_t b = 0; b < cur_.rows && !stopped();) {
        const int64_t e = std::min(cur_.rows, b + size);
        std::vector<bool> drop(size_t(cur_.rows), false);
        for (int64_t r = b; r < e; ++r) drop[size_t(r)] = true;
        if (accept(without_rows(cur_, drop), range("row", b, e))) any = true;
        else b = e;
      }
    }
    return any;
  }

  // Same for columns; the first chunk (every column) tries dim = 0.
  bool pass_columns() {
    bool any = false;
    for (int64_t size = cur_.dim; size >= 1 && !stopped(); size = size == 1 ? 0 : (size + 1) / 2) {
      for (int64_t b = 0; b < cur_.dim && !stopped();) {
        const int64_t e = std::min(cur_.dim, b + size);
        std::vector<bool> drop(size_t(cur_.dim), false);
        for (int64_t j = b; j < e; ++j) drop[size_t(j)] = true;
        if (accept(without_columns(cur_, drop), range("column", b, e))) any = true;
        else b = e;
      }
    }
    return any;
  }

  // Drops unused gates (all at once, then one by one from the highest), then
  // merges each used gate into a lower one.
  bool pass_gates() {
    bool any = false;
    auto unused = unused_gates(cur_);
    int64_t n_unused = 0;
    for (bool u : unused) n_unused += u;
    if (n_unused > 1 && accept(without_gates(cur_, unused), "dropped all " + std::to_string(n_unused) + " unused gates"))
      any = true;
    for (int64_t k = cur_.gates - 1; k >= 0 && !stopped(); --k) {
      if (k >= cur_.gates) continue;
      if (unused_gates(cur_)[size_t(k)]) {
        std::vector<bool> drop(size_t(cur_.gates), false);
        drop[size_t(k)] = true;
        if (accept(without_gates(cur_, drop), "dropped unused gate " + std::to_string(k))) any = true;
        continue;
      }
      for (int64_t to = 0; to < k && !stopped(); ++to)
        if (accept(with_gate_merged(cur_, k, to), "merged gate " + std::to_string(k) + " into gate " + std::to_string(to))) {
          any = true;
          break;
        }
    }
    return any;
  }

  // No plan, then fewer batches, then fewer rows per batch, then fewer
  // repeats. A split (split_invariance) is kept, so the file shows it: its
  // parts merge two by two, then drop (with their rows).
  bool pass_plan() {
    if (!cur_.plan) return false;
    const bool split = is_split_kind(cur_.plan->kind);
    if (!split && accept(without_plan(cur_), "dropped the batch plan")) return true;
    bool any = false;
    for (size_t b = 0; split && cur_.plan && b + 1 < cur_.plan->batches.size() && !stopped();) {
      if (cur_.plan->batches.size() > 2 && accept(with_batches_merged(cur_, b), "merged parts " + std::to_string(b) +
                                                                                  " and " + std::to_string(b + 1)))
        any = true;
      else ++b;
    }
    for (size_t b = 0; cur_.plan && b < cur_.plan->batches.size() && !stopped();) {
      if (cur_.plan->batches.size() > 1 && accept(without_batch(cur_, b), "dropped batch " + std::to_string(b))) any = true;
      else ++b;
    }
    for (size_t b = 0; cur_.plan && b < cur_.plan->batches.size() && !stopped(); ++b)
      for (size_t i = 0; cur_.plan && b < cur_.plan->batches.size() && i < cur_.plan->batches[b].size() && !stopped();) {
        if (cur_.plan->batches[b].size() > 1 &&
            accept(without_batch_entry(cur_, b, i), "dropped entry " + std::to_string(i) + " of batch " + std::to_string(b)))
          any = true;
        else ++i;
      }
    if (cur_.plan && cur_.plan->repeats > 1 && accept(with_repeats(cur_, 1), "one repeat")) any = true;
    return any;
  }

  bool pass_values() {
    bool any = false;
    // Fixed order: the tables and columns first (shared by rows), then the
    // row inputs, the factors a reduction sums before the incoming gradient
    // and the addends (gate_residual: gate, y, grad_out, res).
    std::vector<std::pair<int, const char*>> order;
    auto add = [&](auto pick) {
      int k = 0;
      for (const auto& in : cur_.op->inputs) {
        if (in.role == Role::index) continue;
        if (pick(in)) order.push_back({k, in.name});
        ++k;
      }
    };
    add([](const OpInput& in) { return in.role != Role::row; });
    for (Fill f : {Fill::factor, Fill::upstream, Fill::addend, Fill::small_factor})
      add([f](const OpInput& in) { return in.role == Role::row && in.fill == f; });
    for (const auto& [k, name] : order) any |= pass_tensor(k, name);
    return any;
  }

  // Chunks set to +0 (large chunks first), then each element towards 1, -1
  // and the nearest small integer; an edit must lower value_rank.
  bool pass_tensor(int k, const char* name) {
    bool any = false;
    auto member = [k](Case& c) -> HostTensor& { return c.inputs[size_t(k)]; };
    const int64_t n = member(cur_).numel();
    const DType t = cur_.dtype;
    const uint32_t zero = float_to_bits_rn(t, 0.0f);
    for (int64_t size = n; size >= 1 && !stopped(); size = size == 1 ? 0 : (size + 1) / 2) {
      for (int64_t b = 0; b < n && !stopped(); b += size) {
        const int64_t e = std::min(n, b + size);
        Case cand = cur_;
        bool changes = false;
        for (int64_t i = b; i < e; ++i)
          if (member(cand).bits(i) != zero) {
            member(cand).set_bits(i, zero);
            changes = true;
          }
        if (!changes) continue;
        if (accept(std::move(cand), std::string("set ") + name + element_range(b, e, member(cur_).cols) + " to 0"))
          any = true;
      }
    }
    for (int64_t i = 0; i < n && !stopped(); ++i) {
      const uint32_t bits = member(cur_).bits(i);
      const float v = bits_to_float(t, bits);
      const float tries[] = {1.0f, -1.0f, std::isfinite(v) ? std::nearbyint(v) : 0.0f,
                             std::isfinite(v) ? std::trunc(v / 2) : 0.0f};
      for (float want : tries) {
        const uint32_t wb = float_to_bits_rn(t, want);
        if (value_rank(t, wb) >= value_rank(t, member(cur_).bits(i))) continue;
        Case cand = cur_;
        member(cand).set_bits(i, wb);
        std::ostringstream what;
        what << "set " << name << element_range(i, i + 1, member(cur_).cols) << " from " << v << " to " << want;
        if (accept(std::move(cand), what.str())) {
          any = true;
          break;
        }
      }
    }
    return any;
  }

  static std::string element_range(int64_t b, int64_t e, int64_t cols) {
    std::ostringstream s;
    const int64_t c = cols ? cols : 1;
    if (e - b == 1) s << "[" << b / c << ", " << b % c << "]";
    else s << " elements [" << b << ", " << e << ")";
    return s.str();
  }

  Case cur_;
  const std::function<bool(const Case&)>& still_fails_;
  const ShrinkLog& log_;
  const ShrinkStop& stop_;
  Clock::time_point start_;
  double max_seconds_;
  int max_attempts_;
  int steps_ = 0, attempts_ = 0;
  bool cut_short_ = false, interrupted_ = false;
};

}  // namespace

ShrinkResult shrink_case_with(const Case& c, const std::function<bool(const Case&)>& still_fails,
                              const ShrinkLog& log, double max_seconds, int max_attempts, const ShrinkStop& stop) {
  return Shrinker(c, still_fails, log, max_seconds, max_attempts, stop).run();
}

}  // namespace gatecheck
