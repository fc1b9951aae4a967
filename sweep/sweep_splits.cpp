// split_invariance in the sweep: each full batch of the invariance phase
// split into parts as data-parallel ranks and micro-batches make them, the
// parts' row reductions combined as the implementation declares (else as
// frameworks do), and compared bit for bit with the full batch's. The
// property (properties/checks/split_properties.cpp) does the work; this file
// picks the splits and keeps the first one that differs.
#include <algorithm>

#include "../case/prng.h"
#include "../properties/catalog/property_roles.h"
#include "../properties/checks/properties.h"
#include "sweep_detail.h"

namespace gatecheck::sweep_detail {

namespace {

// k parts (at most one a row): row r in part part_of(r).
template <class PartOf>
BatchPlan split_of(const char* kind, int64_t rows, int64_t k, PartOf part_of) {
  BatchPlan p{kind, std::vector<std::vector<int64_t>>(size_t(std::min(k, rows))), 0};
  for (int64_t r = 0; r < rows; ++r) p.batches[size_t(part_of(r, int64_t(p.batches.size())))].push_back(r);
  p.batches.erase(std::remove_if(p.batches.begin(), p.batches.end(), [](const auto& b) { return b.empty(); }),
                  p.batches.end());
  return p;
}

}  // namespace

std::vector<BatchPlan> sweep_splits(const Case& c, uint64_t seed) {
  const int64_t n = c.rows;
  auto contiguous = [n](int64_t k) {
    return split_of("micro_batches", n, k, [n](int64_t r, int64_t parts) { return r * parts / n; });
  };
  Prng rng(seed ^ 0x5b117ull);
  return {contiguous(2), contiguous(8),
          split_of("strided", n, 4, [](int64_t r, int64_t parts) { return r % parts; }),
          split_of("ranks", n, kMaxSplitParts, [&rng](int64_t, int64_t parts) { return rng.below(parts); })};
}

void splits(const Case& c, const Subject& s, uint64_t seed, InvarianceResult* out, FailureSink* sink) {
  const char* property = split_property().name;
  if (!applies_to(split_property(), *c.op)) return;  // no output reduces over rows
  out->split_combine = s.has_exchange() ? "its declared exchange (" + s.exchange_state() + ")"
                                        : "none declared: the parts' fp32 sum in rank order, then rounded to the dtype";
  for (const BatchPlan& split : sweep_splits(c, seed)) {
    if (split.batches.size() < 2) continue;  // a case of one row has no split
    Case k = c;
    k.plan = split;
    const Verdict v = check_property(property, s, k);
    ++out->split_cases;
    out->splits.compared += v.compared;
    if (v.passed) continue;
    const bool claimed = breaks_claim(v, s.contract, c.dtype);
    ++out->splits.failed;
    (claimed ? out->splits.claimed_failed : out->splits.unclaimed_failed) = true;
    SweepFailure f = plan_failure(property, v, claimed, seed, c.rows, split);  // names the split and the combine
    if (!out->split_first) out->split_first = f;
    if (sink->count(property)) sink->keep(std::move(f));
  }
}

}  // namespace gatecheck::sweep_detail
