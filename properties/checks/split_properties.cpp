// split_invariance: the row reductions of a batch are the same bit for bit
// however its rows are split into parts (data-parallel ranks, micro-batches)
// whose partial reductions are then combined in rank order. The parts are the
// case's plan (a split: disjoint batches); the batch is the rows they name.
// With a declared exchange (gatecheck_split_exchange.h) the parts' states go
// through it; without one, the parts' gradients are summed as frameworks do:
// in fp32, in rank order, then rounded to the dtype.
#include <algorithm>
#include <sstream>

#include "../../case/case_spec.h"
#include "../../harness/run/split_runner.h"
#include "../../harness/run/stage_clock.h"
#include "property_impls.h"

namespace gatecheck::detail {

std::string split_text(const BatchPlan& p) {
  std::ostringstream s;
  s << p.kind << " split into " << p.batches.size() << " parts of ";
  for (size_t i = 0; i < p.batches.size(); ++i) s << (i ? ", " : "") << p.batches[i].size();
  s << " rows";
  size_t n = 0;
  for (const auto& b : p.batches) n += b.size();
  if (p.kind != "micro_batches" && n <= 24) {
    s << " {";
    for (size_t i = 0; i < p.batches.size(); ++i) {
      s << (i ? " | " : "");
      for (size_t k = 0; k < p.batches[i].size(); ++k) s << (k ? " " : "") << p.batches[i][k];
    }
    s << "}";
  }
  return s.str();
}

}  // namespace gatecheck::detail

namespace gatecheck::checks {

using namespace detail;

namespace {

// Why p is not a split of c's rows ("" if it is): every row in range and in
// one part at most.
std::string not_a_split(const Case& c, const BatchPlan& p) {
  std::vector<int> seen(size_t(std::max<int64_t>(c.rows, 0)), -1);
  for (size_t i = 0; i < p.batches.size(); ++i)
    for (int64_t r : p.batches[i]) {
      if (r < 0 || r >= c.rows)
        return "part " + std::to_string(i) + " names row " + std::to_string(r) + " of a " + std::to_string(c.rows) +
               "-row case";
      if (seen[size_t(r)] >= 0)
        return "row " + std::to_string(r) + " is in parts " + std::to_string(seen[size_t(r)]) + " and " +
               std::to_string(i) + " (a split's parts are disjoint)";
      seen[size_t(r)] = int(i);
    }
  return "";
}

// What frameworks do without an exchange: each element the fp32 sum of the
// parts' values in rank order (from rank 0's value), rounded to the dtype.
HostTensor framework_sum(const std::vector<const HostTensor*>& parts) {
  HostTensor t = *parts.front();
  for (int64_t i = 0; i < t.numel(); ++i) {
    float acc = parts.front()->value(i);
    for (size_t k = 1; k < parts.size(); ++k) acc = acc + parts[k]->value(i);
    t.set_value_rn(i, acc);
  }
  return t;
}

}  // namespace

Verdict split_invariance(const Implementation& impl, const Case& c, const PropertyOptions& o) {
  Verdict v;
  // (A plan of another kind, drawn for another property, is no split.)
  const BatchPlan split = c.plan && is_split_kind(c.plan->kind) ? *c.plan : default_split(c);
  if (const std::string why = not_a_split(c, split); !why.empty()) {
    v.passed = false;
    v.message = "the case's plan is not a split: " + why;
    return v;
  }
  // The batch: the rows the parts name, in row order; each part renumbered into it.
  std::vector<int64_t> rows;
  for (const auto& b : split.batches) rows.insert(rows.end(), b.begin(), b.end());
  std::sort(rows.begin(), rows.end());
  std::vector<int64_t> at(size_t(std::max<int64_t>(c.rows, 0)), -1);
  for (size_t i = 0; i < rows.size(); ++i) at[size_t(rows[i])] = int64_t(i);
  const Case whole = int64_t(rows.size()) == c.rows ? c : sub_case(c, rows);
  std::vector<std::vector<int64_t>> parts;
  for (const auto& b : split.batches) {
    std::vector<int64_t> p;
    for (int64_t r : b) p.push_back(at[size_t(r)]);
    parts.push_back(p);
  }
  const int64_t non_empty = std::count_if(parts.begin(), parts.end(), [](const auto& p) { return !p.empty(); });
  const std::vector<int> sums = row_reduction_outputs(*c.op);
  if (non_empty < 2 || c.dim == 0) {
    v.passed = false;
    v.vacuous = true;
    v.message = "vacuous: " + split_text(split) + " has " + std::to_string(non_empty) +
                " non-empty parts (" + describe(c) + "); a pass here would prove nothing";
    return v;
  }
  const RunResult full = run(impl, whole, o);
  if (!full.status.ok()) return run_failed(c, impl.label() + " (full batch)", full.status);

  Outputs combined = outputs_for(whole);
  std::string how;
  if (impl.has_exchange()) {
    how = "its declared exchange (" + impl.exchange_state() + ")";
    std::vector<std::vector<uint64_t>> states(parts.size());
    for (size_t i = 0; i < parts.size(); ++i) {
      const Status s = exchange_partial(impl, sub_case(whole, parts[i]), &states[i]);
      if (!s.ok()) return run_failed(c, impl.label() + " (partial of part " + std::to_string(i) + ")", s);
    }
    std::vector<uint64_t> total;
    Status s = exchange_combine(impl, whole, states, &total);
    if (s.ok()) s = exchange_finalize(impl, whole, total, &combined);
    if (!s.ok()) return run_failed(c, impl.label() + " (combine and finalize)", s);
  } else {
    how = "no exchange declared: the parts' gradients summed in fp32 in rank order, then rounded to the dtype";
    std::vector<RunResult> runs;
    for (size_t i = 0; i < parts.size(); ++i) {
      runs.push_back(run(impl, sub_case(whole, parts[i]), o));
      if (!runs.back().status.ok())
        return run_failed(c, impl.label() + " (part " + std::to_string(i) + ")", runs.back().status);
    }
    for (int k : sums) {
      std::vector<const HostTensor*> ts;
      for (const auto& r : runs) ts.push_back(&r.outputs.tensors[size_t(k)]);
      combined.tensors[size_t(k)] = framework_sum(ts);
    }
  }
  device_done(o);
  const StageTimer t(Stage::compare);
  for (int k : sums) {
    const char* name = c.op->outputs[size_t(k)].name;
    Comparison cmp = compare_bitwise(name, combined.tensors[size_t(k)], full.outputs.tensors[size_t(k)]);
    cmp.got_side = "split";
    cmp.want_side = "full batch";
    for (auto& m : cmp.first) m.why = "combined over the split vs the full batch: " + m.why;
    v.compared += cmp.checked;
    if (!cmp.ok()) add_failure(v, cmp);
  }
  if (!v.passed) {
    std::ostringstream s;
    s << impl.label() << " on " << describe(c) << ", " << split_text(split) << ", combined by " << how << ": ";
    for (size_t i = 0; i < v.comparisons.size(); ++i) {
      const Comparison& cmp = v.comparisons[i];
      const Mismatch& m = cmp.first.front();
      s << (i ? "; " : "") << cmp.tensor << ": " << cmp.failed << " of " << cmp.checked
        << " elements differ, the first at [" << m.row << ", " << m.col << "]: split 0x" << std::hex << m.got_bits
        << " vs full batch 0x" << m.want_bits << std::dec << " (" << m.got << " vs " << m.want << ")";
    }
    v.message = s.str();
  }
  return v;
}

}  // namespace gatecheck::checks
