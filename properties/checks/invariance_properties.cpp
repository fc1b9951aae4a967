// row_invariance, segment_invariance and repeatable: bit-for-bit comparisons
// of an implementation against itself, under a batch plan or across reruns.
// Both invariance properties carry a vacuity guard (plan_movement.h).
#include <algorithm>
#include <cstring>
#include <sstream>

#include "../generate/generators.h"
#include "../../case/plan_movement.h"
#include "../../harness/run/stage_clock.h"
#include "deferred_comparisons.h"
#include "property_impls.h"

namespace gatecheck::checks {

using namespace detail;

namespace {

HostTensor gather_rows(const HostTensor& t, const std::vector<int64_t>& rows) {
  HostTensor g(t.dtype, int64_t(rows.size()), t.cols);
  const size_t rb = size_t(t.cols * dtype_size(t.dtype));
  for (size_t i = 0; i < rows.size() && rb; ++i)
    std::memcpy(g.bytes.data() + i * rb, t.bytes.data() + size_t(rows[i]) * rb, rb);
  return g;
}

// Re-labels a comparison of `got` against `want`, made on gathered rows: row
// i of it is `rows[i]` of the original tensor; `where(i)` says where that row
// sat in the batch. The sides are a sub-batch and the full batch; neither is
// known to be the right one.
template <class Where>
void relabel(Comparison& cmp, const HostTensor& got, const HostTensor& want, const std::vector<int64_t>& rows,
             int64_t cols, Where where) {
  cmp.got_side = "sub-batch";
  cmp.want_side = "full batch";
  for (auto& m : cmp.first) {
    if (m.row < 0) continue;  // the whole tensor (a shape or dtype mismatch)
    const int64_t i = m.row;
    m.row = rows[size_t(i)];
    m.why = where(i) + ": " + m.why;
  }
  // Gathered rows need not be in the tensor's order, so the first and last
  // bad element are found again over the original indices.
  if (cmp.first_bad < 0 || got.numel() != want.numel()) return;
  auto flat = [&](int64_t f) { return cols ? rows[size_t(f / cols)] * cols + f % cols : f; };
  int64_t lo = -1, hi = -1;
  for (int64_t i = cmp.first_bad; i <= cmp.last_bad; ++i) {
    if (got.bits(i) == want.bits(i)) continue;
    const int64_t f = flat(i);
    lo = lo < 0 ? f : std::min(lo, f);
    hi = std::max(hi, f);
  }
  cmp.first_bad = lo;
  cmp.last_bad = hi;
}

std::string plan_text(const BatchPlan& p) {
  return "plan " + p.kind + " with " + std::to_string(p.batches.size()) + " batches";
}

// Fails the verdict when the plan did not really move anything.
void vacuity_guard(Verdict& v, const Movement& mv, const BatchPlan& p, const Case& c, const char* unit) {
  if (mv.ok()) return;
  v.passed = false;
  v.vacuous = true;
  v.message = "vacuous: " + mv.why_vacuous() + " (" + std::to_string(mv.compared) + " " + unit + " compared, " +
              plan_text(p) + ", " + describe(c) + "); a pass here would prove nothing";
}

bool valid_plan(const Case& c, const BatchPlan& p, Verdict& v) {
  for (size_t i = 0; i < p.batches.size(); ++i)
    for (int64_t r : p.batches[i])
      if (r < 0 || r >= c.rows) {
        v.passed = false;
        v.message = "the case's plan is malformed: batch " + std::to_string(i) + " names row " + std::to_string(r) +
                    " of a " + std::to_string(c.rows) + "-row case";
        return false;
      }
  return true;
}

void summarise(Verdict& v, const Implementation& impl, const Case& c, const BatchPlan& p) {
  if (v.passed || v.comparisons.empty()) return;
  std::ostringstream s;
  s << impl.label() << " on " << describe(c) << ", " << plan_text(p) << ": ";
  for (size_t i = 0; i < v.comparisons.size(); ++i) {
    const Comparison& cmp = v.comparisons[i];
    const Mismatch& m = cmp.first.front();
    s << (i ? "; " : "") << cmp.tensor << ": " << cmp.failed << " of " << cmp.checked << " elements differ, one at ["
      << m.row << ", " << m.col << "]: " << cmp.got_side << " 0x" << std::hex << m.got_bits << " vs " << cmp.want_side
      << " 0x" << m.want_bits << std::dec << " (" << m.why << ")";
  }
  v.message = s.str() + (v.message.empty() ? "" : "; " + v.message);
}

}  // namespace

Verdict row_invariance(const Implementation& impl, const Case& c, const PropertyOptions& o) {
  Verdict v;
  const BatchPlan plan = c.plan ? *c.plan : default_plan(c);
  if (!valid_plan(c, plan, v)) return v;
  const RunResult full = run(impl, c, o);
  if (!full.status.ok()) return run_failed(c, impl.label() + " (full batch)", full.status);
  const std::vector<int> rowwise = c.op->outputs_of_kind(OutputKind::rowwise);
  std::vector<Comparison> total(rowwise.size());
  DeferredComparisons deferred;
  for (size_t bi = 0; bi < plan.batches.size(); ++bi) {
    const auto& b = plan.batches[bi];
    if (b.empty()) continue;
    RunResult part = run(impl, sub_case(c, b), o);
    if (!part.status.ok())
      return run_failed(c, impl.label() + " (batch " + std::to_string(bi) + ")", part.status);
    std::vector<HostTensor> outs;  // the batch's row-wise outputs
    for (int k : rowwise) outs.push_back(std::move(part.outputs.tensors[size_t(k)]));
    deferred.add(std::move(outs), [&, bi](const std::vector<HostTensor>& got) {
      const auto& b = plan.batches[bi];
      for (size_t o = 0; o < rowwise.size(); ++o) {
        const size_t k = size_t(rowwise[o]);
        const HostTensor want = gather_rows(full.outputs.tensors[k], b);
        Comparison cmp = compare_bitwise(c.op->outputs[k].name, got[o], want);
        relabel(cmp, got[o], want, b, c.dim, [&](int64_t i) {
          return "batch " + std::to_string(bi) + " (" + std::to_string(b.size()) + " rows) offset " +
                 std::to_string(i) + " vs full batch offset " + std::to_string(b[size_t(i)]);
        });
        merge_into(total[o], cmp);
      }
    });
  }
  device_done(o);  // the comparisons need no device
  deferred.flush();
  const Movement mv = row_movement(c, plan);
  v.compared = mv.compared;
  for (auto& t : total)
    if (!t.ok()) add_failure(v, t);
  vacuity_guard(v, mv, plan, c, "rows");
  summarise(v, impl, c, plan);
  return v;
}

Verdict segment_invariance(const Implementation& impl, const Case& c, const PropertyOptions& o) {
  Verdict v;
  const BatchPlan plan = c.plan ? *c.plan : default_plan(c);
  if (!valid_plan(c, plan, v)) return v;
  const RunResult full = run(impl, c, o);
  if (!full.status.ok()) return run_failed(c, impl.label() + " (full batch)", full.status);
  const std::vector<int> sums = c.op->outputs_of_kind(OutputKind::segment_sum);
  const auto by_gate = rows_by_gate(c);
  std::vector<int64_t> unused;
  for (size_t k = 0; k < by_gate.size(); ++k)
    if (by_gate[k].empty()) unused.push_back(int64_t(k));
  std::vector<Comparison> total(sums.size());
  DeferredComparisons deferred;
  for (size_t bi = 0; bi < plan.batches.size(); ++bi) {
    const auto& b = plan.batches[bi];
    auto gates = whole_segments(by_gate, c, b);
    if (b.empty() || gates.empty()) continue;
    gates.insert(gates.end(), unused.begin(), unused.end());  // zero in both
    RunResult part = run(impl, sub_case(c, b), o);
    if (!part.status.ok())
      return run_failed(c, impl.label() + " (batch " + std::to_string(bi) + ")", part.status);
    std::vector<HostTensor> outs;  // the batch's segment sums
    for (int k : sums) outs.push_back(std::move(part.outputs.tensors[size_t(k)]));
    deferred.add(std::move(outs), [&, bi, gates = std::move(gates)](const std::vector<HostTensor>& part_sums) {
      const auto& b = plan.batches[bi];
      for (size_t s = 0; s < sums.size(); ++s) {
        const size_t out = size_t(sums[s]);
        const HostTensor got = gather_rows(part_sums[s], gates);
        const HostTensor want = gather_rows(full.outputs.tensors[out], gates);
        Comparison cmp = compare_bitwise(c.op->outputs[out].name, got, want);
        relabel(cmp, got, want, gates, c.dim, [&](int64_t i) {
          const int64_t k = gates[size_t(i)];
          const size_t n = by_gate[size_t(k)].size();
          return "index " + std::to_string(k) + (n ? " (all its " + std::to_string(n) + " rows" : " (unused") +
                 " in batch " + std::to_string(bi) + " of " + std::to_string(b.size()) + " rows)";
        });
        merge_into(total[s], cmp);
      }
    });
  }
  device_done(o);  // the comparisons need no device
  deferred.flush();
  const Movement mv = segment_movement(c, plan);
  v.compared = mv.compared;
  for (auto& t : total)
    if (!t.ok()) add_failure(v, t);
  vacuity_guard(v, mv, plan, c, "whole gate segments");
  summarise(v, impl, c, plan);
  return v;
}

Verdict repeatable(const Implementation& impl, const Case& c, const PropertyOptions& o) {
  Verdict v;
  const int extra = c.plan && c.plan->repeats > 0 ? c.plan->repeats + 1 : 2;
  const RunResult first = run(impl, c, o);
  if (!first.status.ok()) return run_failed(c, impl.label() + " (call 1)", first.status);
  std::vector<Comparison> total(c.op->outputs.size());
  DeferredComparisons deferred;
  for (int k = 0; k < extra; ++k) {
    RunResult again = run(impl, c, o);
    if (!again.status.ok())
      return run_failed(c, impl.label() + " (call " + std::to_string(k + 2) + ")", again.status);
    deferred.add(std::move(again.outputs.tensors), [&, k](const std::vector<HostTensor>& later) {
      for (size_t t = 0; t < total.size(); ++t) {
        Comparison cmp = compare_bitwise(c.op->outputs[t].name, later[t], first.outputs.tensors[t]);
        cmp.got_side = "a later call";  // the mismatch's `why` says which
        cmp.want_side = "call 1";
        for (auto& m : cmp.first) m.why = "call " + std::to_string(k + 2) + " vs call 1: " + m.why;
        merge_into(total[t], cmp);
      }
    });
  }
  device_done(o);  // the comparisons need no device
  deferred.flush();
  for (auto& t : total) {
    v.compared += t.checked;
    if (!t.ok()) add_failure(v, t);
  }
  if (!v.passed) {
    std::ostringstream s;
    s << impl.label() << " on " << describe(c) << " (" << extra + 1 << " calls): ";
    for (size_t i = 0; i < v.comparisons.size(); ++i) {
      const auto& cmp = v.comparisons[i];
      const auto& m = cmp.first.front();
      s << (i ? "; " : "") << cmp.tensor << ": " << cmp.failed << " elements differ, one at [" << m.row << ", "
        << m.col << "]: 0x" << std::hex << m.got_bits << " vs 0x" << m.want_bits << std::dec << " (" << m.why
        << ")";
    }
    v.message = s.str();
  }
  return v;
}

}  // namespace gatecheck::checks
