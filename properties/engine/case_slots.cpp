#include "case_slots.h"

#include <stdexcept>

#include "../../case/fnv1a.h"

namespace gatecheck {

int case_size(int64_t k) { return k < 20 ? int(k * 5) : int((k * 37) % 101); }

rc::Gen<Case> gen_case_for_tier(const std::string& property, const GenLimits& limits, int tier) {
  if (tier == 0) return gen_case_for(property, limits);
  throw std::invalid_argument("no case generator for tier " + std::to_string(tier));
}

// A stable hash: the same seed gives the same cases on every machine, and
// each property its own stream.
CaseSlots::CaseSlots(uint64_t seed, const std::string& property, const TierOf& tier_of)
    : property_(property), tier_of_(tier_of), stream_(seed ^ fnv1a(property)) {}

std::optional<CaseSlot> CaseSlots::next(int64_t max_cases, double slice_seconds,
                                        std::chrono::steady_clock::time_point start) {
  const std::lock_guard<std::mutex> lock(m_);
  if (closed_ || next_ > last_) return std::nullopt;
  if (max_cases > 0 && next_ >= max_cases) return std::nullopt;
  if (slice_seconds >= 0 && next_ > 0 &&
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= slice_seconds)
    return std::nullopt;
  CaseSlot s;
  s.index = next_++;
  s.random = stream_.split();
  s.size = case_size(s.index);
  s.tier = tier_of_ ? tier_of_(property_, s.index) : 0;
  return s;
}

void CaseSlots::close() {
  const std::lock_guard<std::mutex> lock(m_);
  closed_ = true;
}

void CaseSlots::cut_after(int64_t k) {
  const std::lock_guard<std::mutex> lock(m_);
  if (k < last_) last_ = k;
}

}  // namespace gatecheck
