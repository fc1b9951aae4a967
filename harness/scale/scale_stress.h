// Scheduling stress for repeatability at scale: between the runs of one case
// the harness perturbs how the implementation's work is scheduled, so that an
// order of float atomics (or of thread results) that depends on scheduling
// shows as differing bits.
//
// On CUDA (scale_stress_device.cu), before each call:
//  - a noise kernel on another stream occupies `noise_units` SMs (two
//    1024-thread blocks an SM, each with half the SM's shared memory, so no
//    other block fits beside them) for `noise_us`: the implementation's
//    blocks start on the other SMs and reach these only as the noise ends;
//  - a delay kernel holds the implementation's own stream for `delay_us`
//    first, so its launch meets the noise at a varying point;
//  - the implementation's stream has the device's lowest or highest priority,
//    or is the legacy default stream, and the noise the other priority.
// On the CPU (scale_stress.cpp): `noise_units` threads spin for `noise_us`
// while the call runs, after a sleep of `delay_us`: a threaded plugin's
// threads then finish in another order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../../kernels/gate_residual.h"

namespace gatecheck {

struct StressSetting {
  bool active = false;  // false: an ordinary, unperturbed run
  int noise_units = 0;  // SMs (CUDA) or spinning threads (CPU)
  int noise_us = 0;     // how long the noise lasts
  int delay_us = 0;     // how long the call is held back after the noise starts
  int priority = 0;     // CUDA: 0 the legacy default stream, 1 lowest, 2 highest priority
  std::string describe() const;
  bool operator==(const StressSetting& o) const {
    return active == o.active && noise_units == o.noise_units && noise_us == o.noise_us &&
           delay_us == o.delay_us && priority == o.priority;
  }
};

// The settings for `runs` runs of one case: run 0 unperturbed (the reference
// the others are compared with), and each later run a different perturbation
// drawn from `seed`: noise on a quarter, half, three quarters and all but one
// of `capacity` units in turn, delays from 0 to 200 us, and every priority.
// Deterministic: the same seed gives the same schedule.
std::vector<StressSetting> stress_schedule(uint64_t seed, int runs, int capacity);

// SMs of the current CUDA device (0 if there is none), or the CPU's hardware threads.
int stress_capacity(Device d);

// Applies one setting around a call: construct, make the call on stream(),
// then destroy (which waits for the noise to end). Inactive settings do nothing.
class StressScope {
 public:
  StressScope(Device d, const StressSetting& s);
  ~StressScope();
  StressScope(const StressScope&) = delete;
  StressScope& operator=(const StressScope&) = delete;
  // The stream for the implementation's call (a cudaStream_t), or nullptr:
  // the legacy default stream on CUDA, and always on the CPU.
  void* stream() const { return stream_; }

 private:
  Device device_;
  StressSetting setting_;
  void* stream_ = nullptr;
  std::vector<void*> threads_;  // CPU noise threads (std::thread*)
  volatile bool* stop_ = nullptr;
};

// The CUDA side (scale_stress_device.cu): launch the noise and the delay for
// `s`, returning the stream the call should use. Compiled everywhere; without
// a device it returns nullptr and launches nothing.
void* stress_device_begin(const StressSetting& s);

}  // namespace gatecheck
