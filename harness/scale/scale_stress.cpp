#include "scale_stress.h"

#include <chrono>
#include <sstream>
#include <thread>

#include "../../case/prng.h"

namespace gatecheck {

std::string StressSetting::describe() const {
  if (!active) return "unperturbed";
  std::ostringstream s;
  static const char* prio[] = {"the default stream", "a low-priority stream", "a high-priority stream"};
  s << "noise on " << noise_units << " units for " << noise_us << " us, delay " << delay_us << " us, "
    << prio[priority >= 0 && priority <= 2 ? priority : 0];
  return s.str();
}

std::vector<StressSetting> stress_schedule(uint64_t seed, int runs, int capacity) {
  std::vector<StressSetting> v;
  if (runs <= 0) return v;
  v.push_back(StressSetting{});  // run 0: the reference
  Prng rng(seed ^ 0x57e55ull);
  static const int kNoiseUs[] = {50, 200, 500, 1500};
  static const int kDelayUs[] = {0, 5, 20, 80, 200};
  static const double kShare[] = {0.25, 0.5, 0.75, -1};  // -1: all but one unit
  const int first_prio = int(rng.below(3));
  for (int k = 1; k < runs; ++k) {
    StressSetting s;
    s.active = true;
    const double share = kShare[(k - 1) % 4];
    s.noise_units = capacity <= 1 ? 1 : share < 0 ? capacity - 1 : std::max(1, int(capacity * share + 0.5));
    s.noise_us = kNoiseUs[rng.below(4)];
    s.delay_us = kDelayUs[rng.below(5)];
    s.priority = (first_prio + k) % 3;
    // every run a different perturbation
    for (bool again = true; again;) {
      again = false;
      for (const auto& o : v)
        if (o == s) {
          s.delay_us += 7;
          again = true;
        }
    }
    v.push_back(s);
  }
  return v;
}

StressScope::StressScope(Device d, const StressSetting& s) : device_(d), setting_(s) {
  if (!s.active) return;
  if (d == Device::cuda) {
    stream_ = stress_device_begin(s);
    return;
  }
  // CPU: spinning threads for noise_us, then the delay before the call.
  stop_ = new volatile bool(false);
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(s.noise_us);
  volatile bool* stop = stop_;
  for (int i = 0; i < s.noise_units; ++i)
    threads_.push_back(new std::thread([until, stop] {
      volatile uint64_t x = 0;
      while (!*stop && std::chrono::steady_clock::now() < until) x = x + 1;
    }));
  if (s.delay_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(s.delay_us));
}

StressScope::~StressScope() {
  if (stop_) *stop_ = true;
  for (void* t : threads_) {
    auto* th = static_cast<std::thread*>(t);
    th->join();
    delete th;
  }
  delete stop_;
}

}  // namespace gatecheck
