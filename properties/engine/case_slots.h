// Which case is case k: every case of a check is derived from the run's seed,
// the property and its index k (0, 1, 2, ... within one implementation x
// property), whatever thread draws it. So the same --seed gives the same
// cases for any --jobs, and case k is the same case whatever the budget.
//
//   stream(property) = rc::Random(seed ^ fnv1a(property))
//   random_k         = the (k+1)-th stream(property).split()  (as a serial loop would take them)
//   size_k           = case_size(k): 0, 5, ..., 95 for k < 20, then (37 k) mod 101
//   tier_k           = CheckOptions::tier_of(property, k), 0 without the hook
//   case_k           = gen_case_for_tier(property, limits, tier_k)(random_k, size_k)
// A case the generator cannot draw (its vacuity filter gives up) is skipped
// but keeps its index. Every implementation sees the same cases.
#pragma once

#include <rapidcheck.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "../generate/generators.h"

namespace gatecheck {

struct CaseSlot {
  int64_t index = 0;
  rc::Random random;
  int size = 0;
  int tier = 0;
};

// RapidCheck sizes ramp from small to large, as RapidCheck's own runner does;
// after the ramp they cycle through the whole range.
int case_size(int64_t k);

// The generator of a tier: 0 is gen_case_for(property, limits). Other tiers
// are for hooks to add (such as a share of cases drawn at scale); asking for
// one that does not exist throws std::invalid_argument.
rc::Gen<Case> gen_case_for_tier(const std::string& property, const GenLimits& limits, int tier);

// Hands out the slots of one implementation x property in index order, to
// any number of threads (a lock held for one split), until a limit says
// stop: a case budget, a time slice, close(), or cut_after(k).
class CaseSlots {
 public:
  using TierOf = std::function<int(const std::string& property, int64_t index)>;
  CaseSlots(uint64_t seed, const std::string& property, const TierOf& tier_of);
  // The next slot, or none once a limit is reached: index max_cases (when
  // > 0), or `slice_seconds` (when >= 0; negative: no time budget) gone since
  // `start` and at least one slot handed out.
  std::optional<CaseSlot> next(int64_t max_cases, double slice_seconds, std::chrono::steady_clock::time_point start);
  void close();                // no more slots
  void cut_after(int64_t k);   // no slot after index k (a claimed failure at k: what follows would not count)

 private:
  std::mutex m_;
  std::string property_;
  TierOf tier_of_;
  rc::Random stream_;
  int64_t next_ = 0;
  int64_t last_ = INT64_MAX;
  bool closed_ = false;
};

}  // namespace gatecheck
