// split_invariance at scale: a scale case of many rows, wide rows or many
// gates, split into up to 64 parts (contiguous micro-batches, rows dealt to
// ranks in turn, or each row in a random rank), in a ScaleSession where the
// implementation runs: the full batch into one output set; then each part
// through the implementation's declared exchange (its states in host memory,
// combined in rank order, finished into the other set and compared there bit
// for bit), or, without one, each part's run with its row reductions fetched
// and summed on the host in fp32 in rank order, rounded to the dtype, as
// frameworks do, and compared with the full batch's. The same semantics and
// evidence as the small-case property (split_properties.cpp). Only the row
// reductions (gates x dim, or dim) and the states come to the host, which
// the draw keeps small (scale_tier.cpp).
#include <algorithm>
#include <sstream>

#include "../../case/case_spec.h"
#include "../../harness/run/split_runner.h"
#include "../../harness/scale/scale_session.h"
#include "../catalog/property_checks.h"
#include "../checks/property_impls.h"
#include "scale_check_detail.h"
#include "scale_properties.h"

namespace gatecheck::checks {

namespace {

using namespace scale_detail;

// The framework's combine of one row reduction: the parts' values summed in
// fp32 in rank order (from rank 0's value), then rounded to the dtype.
class FrameworkSum {
 public:
  void add(const HostTensor& part) {
    if (acc_.empty()) {
      acc_.resize(size_t(part.numel()));
      for (int64_t i = 0; i < part.numel(); ++i) acc_[size_t(i)] = float(part.value(i));
      return;
    }
    for (int64_t i = 0; i < part.numel(); ++i) acc_[size_t(i)] = acc_[size_t(i)] + float(part.value(i));
  }
  HostTensor rounded(HostTensor like) const {
    for (int64_t i = 0; i < like.numel(); ++i) like.set_value_rn(i, acc_[size_t(i)]);
    return like;
  }

 private:
  std::vector<float> acc_;
};

std::vector<int64_t> iota_of(int64_t n) {
  std::vector<int64_t> v(size_t(std::max<int64_t>(n, 0)));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = i;
  return v;
}

}  // namespace

Verdict scale_split_invariance(const Implementation& impl, const ScaleCase& c, const ScaleCheckOptions& o) {
  Verdict v;
  // (A plan of another kind is no split: the property's default one then.)
  const BatchPlan split = c.plan && is_split_kind(c.plan->kind) ? *c.plan : default_split(c.shadow());
  std::vector<std::vector<int64_t>> parts;
  std::vector<int64_t> rows;
  for (const auto& b : split.batches) {
    if (b.empty()) continue;
    parts.push_back(b);
    rows.insert(rows.end(), b.begin(), b.end());
  }
  std::sort(rows.begin(), rows.end());
  if (std::adjacent_find(rows.begin(), rows.end()) != rows.end())
    throw std::invalid_argument("split_invariance at scale: " + describe(c) + ": the plan's parts overlap (no split)");
  if (parts.size() < 2 || c.dim == 0) {
    v.passed = false;
    v.vacuous = true;
    v.message = "vacuous: " + detail::split_text(split) + " has " + std::to_string(parts.size()) +
                " non-empty parts (" + describe(c) + "); a pass here would prove nothing";
    return v;
  }
  // The batch is the rows the parts name (all of them, unless a shrunk view kept fewer parts).
  const std::vector<int64_t>* whole = int64_t(rows.size()) == c.rows ? nullptr : &rows;
  ScaleSession s(impl, c, 2, o.memory_bytes);
  s.time_calls(o.times);
  Status st = s.run(0, whole);
  if (!st.ok()) return failed_run(impl, s, c, "(full batch)", st);
  const std::vector<int> sums = row_reduction_outputs(c.op());
  std::vector<Comparison> cmps;
  std::string how;
  if (impl.has_exchange()) {
    how = "its declared exchange (" + impl.exchange_state() + ")";
    std::vector<std::vector<uint64_t>> states(parts.size());
    for (size_t i = 0; i < parts.size(); ++i) {
      st = s.exchange_partial(parts[i], &states[i]);
      if (!st.ok()) return failed_run(impl, s, c, "(partial of part " + std::to_string(i) + ")", st);
    }
    std::vector<const std::vector<uint64_t>*> ptrs;
    for (const auto& x : states) ptrs.push_back(&x);
    const gatecheck_problem p{int64_t(rows.size()), c.dim, c.gates, int32_t(c.dtype), int32_t(impl.device), nullptr};
    std::vector<uint64_t> total;
    st = impl.exchange_combine(p, ptrs, &total);
    if (st.ok()) st = s.exchange_finalize(1, whole, total);
    if (!st.ok()) return failed_run(impl, s, c, "(combine and finalize)", st);
    for (int k : sums) cmps.push_back(s.compare(1, 0, k));
  } else {
    how = "no exchange declared: the parts' gradients summed in fp32 in rank order, then rounded to the dtype";
    std::vector<FrameworkSum> acc(sums.size());
    for (size_t i = 0; i < parts.size(); ++i) {
      st = s.run(1, &parts[i]);
      if (!st.ok()) return failed_run(impl, s, c, "(part " + std::to_string(i) + ")", st);
      for (size_t k = 0; k < sums.size(); ++k) acc[k].add(s.fetch(1, sums[k], iota_of(s.output_rows(1, sums[k]))));
    }
    for (size_t k = 0; k < sums.size(); ++k) {
      const HostTensor full = s.fetch(0, sums[k], iota_of(s.output_rows(0, sums[k])));
      cmps.push_back(compare_bitwise(c.op().outputs[size_t(sums[k])].name, acc[k].rounded(full), full));
    }
  }
  for (Comparison& cmp : cmps) {
    cmp.got_side = "split";
    cmp.want_side = "full batch";
    for (auto& m : cmp.first) m.why = "combined over the split vs the full batch: " + m.why;
    v.compared += cmp.checked;
    if (!cmp.ok()) detail::add_failure(v, cmp);
  }
  if (!v.passed) {
    std::ostringstream m;
    m << head(impl, c) << detail::split_text(split) << ", combined by " << how << ": ";
    for (size_t i = 0; i < v.comparisons.size(); ++i) {
      const Comparison& cmp = v.comparisons[i];
      const Mismatch& x = cmp.first.front();
      m << (i ? "; " : "") << cmp.tensor << ": " << cmp.failed << " of " << cmp.checked
        << " elements differ, the first at [" << x.row << ", " << x.col << "]: split 0x" << std::hex << x.got_bits
        << " vs full batch 0x" << x.want_bits << std::dec << " (" << x.got << " vs " << x.want << ")";
    }
    v.message = m.str();
  }
  return v;
}

}  // namespace gatecheck::checks
