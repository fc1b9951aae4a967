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
#include <tuple>

namespace gatecheck {
namespace cuda_occupancy {

inline cudaError_t sm_count(int* n) {
  static std::mutex m;
  static std::map<int, int> known;
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  std::lock_guard<std::mutex> lock(m);
  const auto it = known.find(dev);
  if (it != known.end()) {
    *n = it->second;
    return cudaSuccess;
  }
  e = cudaDeviceGetAttribute(n, cudaDevAttrMultiProcessorCount, dev);
  if (e == cudaSuccess) known[dev] = *n;
  return e;
}

// Blocks of `Kernel` (`threads` threads, `smem` bytes of dynamic shared
// memory) resident on one SM. Ask after any cudaFuncSetAttribute that changes
// the kernel's limits: the first answer for a shape is the one kept.
template <auto Kernel>
cudaError_t resident_blocks_per_sm(int threads, size_t smem, int* n) {
  static std::mutex m;
  static std::map<std::tuple<int, int, size_t>, int> known;
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  std::lock_guard<std::mutex> lock(m);
  const auto key = std::make_tuple(dev, threads, smem);
  const auto it = known.find(key);
  if (it != known.end()) {
    *n = it->second;
    return cudaSuccess;
  }
  e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, Kernel, threads, smem);
  if (e == cudaSuccess) known[key] = *n;
  return e;
}

}  // namespace cuda_occupancy
}  // namespace gatecheck
