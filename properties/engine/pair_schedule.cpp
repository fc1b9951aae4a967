#include "pair_schedule.h"

#include <algorithm>

namespace gatecheck {

PairSchedule::PairSchedule(CaseSlots& small, double share, bool time_budget)
    : small_(small), share_(share, time_budget), share_value_(share), scale_on_(share > 0), time_budget_(time_budget) {}

double PairSchedule::scale_allowance(double share, double slice_seconds, double elapsed, double scale_seconds_used) {
  const double of_share = share * slice_seconds - scale_seconds_used;
  const double of_slice = slice_seconds - elapsed;
  return std::max(0.0, std::min(of_share, of_slice));
}

std::optional<PairSlot> PairSchedule::next(int64_t max_cases, double slice_seconds,
                                           std::chrono::steady_clock::time_point start) {
  const std::lock_guard<std::mutex> lock(m_);
  if (closed_ || position_ > last_) return std::nullopt;
  if (max_cases > 0 && position_ >= max_cases) return std::nullopt;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (slice_seconds >= 0 && position_ > 0 && elapsed >= slice_seconds) return std::nullopt;
  PairSlot s;
  s.position = position_;
  if (scale_on_ && !(time_budget_ && scale_running_) && share_.due(elapsed, position_)) {
    s.scale = true;
    s.scale_ordinal = scale_handed_++;
    if (time_budget_) {
      scale_running_ = true;
      if (slice_seconds >= 0) s.scale_seconds = scale_allowance(share_value_, slice_seconds, elapsed, share_.seconds());
    }
    else share_.ran(0);  // by cases: the slot is a case of the tier whatever it takes
  } else {
    std::optional<CaseSlot> c = small_.next(0, -1, start);  // the limits are this class's
    if (!c) return std::nullopt;
    s.small = *c;
  }
  ++position_;
  return s;
}

void PairSchedule::scale_done(double seconds, bool ran, bool nothing_fits) {
  const std::lock_guard<std::mutex> lock(m_);
  if (nothing_fits) scale_on_ = false;
  if (!time_budget_) return;
  if (ran) share_.ran(seconds);
  else share_.spent(seconds);
  scale_running_ = false;
}

void PairSchedule::close() {
  const std::lock_guard<std::mutex> lock(m_);
  closed_ = true;
}

void PairSchedule::cut_after(int64_t position) {
  const std::lock_guard<std::mutex> lock(m_);
  if (position < last_) last_ = position;
}

}  // namespace gatecheck
