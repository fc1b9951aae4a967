#include "stage_clock.h"

namespace gatecheck {

const char* stage_name(Stage s) {
  switch (s) {
    case Stage::generate: return "generate";
    case Stage::buffers: return "buffers";
    case Stage::copies: return "copies";
    case Stage::calls: return "calls";
    case Stage::sync: return "sync";
    case Stage::oracle: return "oracle";
    case Stage::compare: return "compare";
    case Stage::child: return "child";
    case Stage::bookkeeping: return "bookkeeping";
  }
  return "?";
}

double StageTimes::total() const {
  double t = 0;
  for (double s : seconds) t += s;
  return t;
}

StageTimes& StageTimes::operator+=(const StageTimes& o) {
  for (int i = 0; i < kStageCount; ++i) seconds[i] += o.seconds[i];
  return *this;
}

StageTimes StageTimes::operator-(const StageTimes& o) const {
  StageTimes d;
  for (int i = 0; i < kStageCount; ++i) d.seconds[i] = seconds[i] - o.seconds[i];
  return d;
}

StageTimes& thread_stage_times() {
  thread_local StageTimes t;
  return t;
}

namespace {
thread_local StageTimer* t_innermost = nullptr;
double seconds_since(std::chrono::steady_clock::time_point t0, std::chrono::steady_clock::time_point now) {
  return std::chrono::duration<double>(now - t0).count();
}
}  // namespace

StageTimer::StageTimer(Stage s) : stage_(s), t0_(std::chrono::steady_clock::now()), outer_(t_innermost) {
  if (outer_) outer_->pause_at(t0_);  // (the innermost timer is always running)
  t_innermost = this;
}

void StageTimer::pause_at(std::chrono::steady_clock::time_point now) {
  if (paused_) return;
  paused_ = true;
  thread_stage_times()[stage_] += seconds_since(t0_, now);
}

void StageTimer::stop() {
  if (stopped_) return;
  const auto now = std::chrono::steady_clock::now();
  pause_at(now);
  stopped_ = true;
  if (t_innermost != this) return;  // stopped early, under a timer still running: that one resumes its own outer
  StageTimer* o = outer_;
  while (o && o->stopped_) o = o->outer_;
  t_innermost = o;
  if (o) {
    o->t0_ = now;
    o->paused_ = false;
  }
}

}  // namespace gatecheck
