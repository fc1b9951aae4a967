// Where a case's time goes: steady_clock accounting by stage, kept per thread
// (no lock, no shared cache line), so that every worker of a parallel check
// can time itself. A StageTimer adds the time from its construction to its
// destruction to the running total of its stage on this thread; whoever wants
// a breakdown reads the totals before and after the work and subtracts.
//
// The stages are what `gatecheck bench --harness` reports. Time not inside any
// timer (property logic such as building sub-batches, the engine's loop) is
// the breakdown's "other": total minus the stages.
#pragma once

#include <chrono>

namespace gatecheck {

enum class Stage : int {
  generate,     // RapidCheck generation and the case's materialisation
  buffers,      // guarded buffers: allocation, canaries, poison
  copies,       // inputs into the buffers, outputs and guards back out (device copies included)
  calls,        // the implementation's forward and backward (a GPU call that syncs inside is all here)
  sync,         // device synchronisation after a call, and its error check
  oracle,       // the float64 reference (and the eager model)
  compare,      // comparisons: against the oracle, bitwise, guards, inputs, poison
  child,        // child processes (error_inputs' probes, --isolate): fork, the work inside, the wait
  bookkeeping,  // the engine's own: the in-flight snapshot, coverage, progress, results
};
constexpr int kStageCount = 9;
const char* stage_name(Stage s);

struct StageTimes {
  double seconds[kStageCount] = {};
  double& operator[](Stage s) { return seconds[int(s)]; }
  double operator[](Stage s) const { return seconds[int(s)]; }
  double total() const;
  StageTimes& operator+=(const StageTimes& o);
  StageTimes operator-(const StageTimes& o) const;
};

// This thread's running totals since it started.
StageTimes& thread_stage_times();

// Timers nest: an inner timer's time is its own stage's, not also the outer
// one's (the outer pauses while the inner runs).
class StageTimer {
 public:
  explicit StageTimer(Stage s);
  ~StageTimer() { stop(); }
  // Ends this stage now (the destructor then does nothing).
  void stop();
  StageTimer(const StageTimer&) = delete;
  StageTimer& operator=(const StageTimer&) = delete;

 private:
  void pause_at(std::chrono::steady_clock::time_point now);
  Stage stage_;
  std::chrono::steady_clock::time_point t0_;
  StageTimer* outer_;
  bool paused_ = false, stopped_ = false;
};

}  // namespace gatecheck
