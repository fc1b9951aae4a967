// A scale case on a GPU has the device to itself: the check's other workers
// start no small case on that device while it runs (those under way finish
// first), and each draws its next case, then waits with it until it is done.
// A small case holds the device for its calls only: from after its drawing
// until its property's calls are over (PropertyOptions::device_done), so that
// its drawing, oracle and comparisons, host work, run beside a scale case.
//
// Sharing it cost the scale tier most of its cases: on an H100 a split
// case's parts took 16 to 64 ms each with 16 workers running small cases
// beside it, and 0.2 to 1 ms each with one (gate_residual's first scale case
// took 16.3 s of a 15 s share; bench/results/split/scale-parts-jobs/). Its
// calls synchronise with the whole device, behind whatever the workers have
// queued. The small cases give up the scale tier's share of the wall time,
// which is what the share means. On the CPU the cases share the cores unless
// asked (ScaleOptions::alone_on_cpu): a scale case there is one thread's
// work, and its time follows the cores it gets either way.
#pragma once

#include <condition_variable>
#include <mutex>

#include "../../kernels/op_contract.h"

namespace gatecheck {

class DeviceGate {
 public:
  // A small case's hold: waits while a scale case has the device, or waits
  // for it (a waiting scale case goes first, so that a stream of small cases
  // never starves it).
  class Shared {
   public:
    explicit Shared(DeviceGate* g);  // nullptr: no gate (a device that is shared)
    ~Shared();
    Shared(const Shared&) = delete;
    Shared& operator=(const Shared&) = delete;
    double seconds_waited() const { return waited_; }

   private:
    DeviceGate* g_;
    double waited_ = 0;
  };
  // A scale case's hold: waits for the small cases under way to finish.
  // seconds_waited() says how long, so that the case's own time leaves it out.
  class Exclusive {
   public:
    explicit Exclusive(DeviceGate* g);
    ~Exclusive();
    Exclusive(const Exclusive&) = delete;
    Exclusive& operator=(const Exclusive&) = delete;
    double seconds_waited() const { return waited_; }

   private:
    DeviceGate* g_;
    double waited_ = 0;
  };

  int small_cases_running() const;
  int scale_cases_waiting() const;
  bool scale_case_running() const;

 private:
  mutable std::mutex m_;
  std::condition_variable cv_;
  int shared_ = 0;     // small cases under way
  int wanting_ = 0;    // scale cases waiting for the device
  bool exclusive_ = false;
};

// The process's gate for device d: a GPU's, and the CPU's where
// `cpu_too`; nullptr where cases share the device.
DeviceGate* device_gate(Device d, bool cpu_too = false);

}  // namespace gatecheck
