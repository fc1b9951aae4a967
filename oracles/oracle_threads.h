// The oracle's work on the machine's threads, for the large cases of the
// sweep (minutes on one thread at 131072 x 5376): how many threads a case
// takes, and a run of f(t) on each. Whatever runs on them must give the bits
// of one thread: each caller says why its split does.
#pragma once

#include <algorithm>
#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

namespace gatecheck {
namespace oracle_threads {

// One thread below 4M elements (the engine's own cases, which it already
// spreads over --jobs), else the machine's.
inline int for_elements(int64_t elements) {
  constexpr int64_t kThreadedFrom = int64_t(1) << 22;
  return elements < kThreadedFrom ? 1 : int(std::max(1u, std::thread::hardware_concurrency()));
}

// f(t) for t in [0, threads), each on its own thread (t = 0 on this one).
template <class F>
void run(int threads, const F& f) {
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(f, t);
  f(0);
  for (std::thread& p : pool) p.join();
}

// [begin, end) cut into `parts` even pieces: piece t.
inline std::pair<int64_t, int64_t> piece(int64_t begin, int64_t end, int t, int parts) {
  const int64_t n = end - begin;
  return {begin + n * t / parts, begin + n * (t + 1) / parts};
}

}  // namespace oracle_threads
}  // namespace gatecheck
