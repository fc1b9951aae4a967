// What the current device runs at once: its SM count, and a kernel's resident
// blocks an SM at a launch shape. Each is asked of the driver once per device
// (and kernel and shape) and kept, so a launch that sizes its grid by them
// makes no query after its first; keyed by device, so a process that moves
// between GPUs of different sizes gets each one's figures.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <map>
#include <mutex>
#include <utility>

namespace gatecheck {
namespace cuda_occupancy {

// The current device's figure for `key`: ask(dev, n) the first time, then
// the answer kept in `known`.
template <class Key, class Ask>
cudaError_t asked_once(std::mutex& m, std::map<std::pair<int, Key>, int>& known, const Key& key, int* n, Ask ask) {
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  std::lock_guard<std::mutex> lock(m);
  const auto it = known.find({dev, key});
  if (it != known.end()) {
    *n = it->second;
    return cudaSuccess;
  }
  e = ask(dev, n);
  if (e == cudaSuccess) known[{dev, key}] = *n;
  return e;
}

inline cudaError_t sm_count(int* n) {
  static std::mutex m;
  static std::map<std::pair<int, int>, int> known;
  return asked_once(m, known, 0, n, [](int dev, int* out) {
    return cudaDeviceGetAttribute(out, cudaDevAttrMultiProcessorCount, dev);
  });
}

// Blocks of `Kernel` (`threads` threads, `smem` bytes of dynamic shared
// memory) resident on one SM. Ask after any cudaFuncSetAttribute that changes
// the kernel's limits: the first answer for a shape is the one kept.
template <auto Kernel>
cudaError_t resident_blocks_per_sm(int threads, size_t smem, int* n) {
  static std::mutex m;
  static std::map<std::pair<int, std::pair<int, size_t>>, int> known;
  return asked_once(m, known, std::make_pair(threads, smem), n, [&](int, int* out) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(out, Kernel, threads, smem);
  });
}

}  // namespace cuda_occupancy
}  // namespace gatecheck
