// Device helpers shared by the kernels: programmatic dependent launch, the
// call's index status, grid-stride indices.
#pragma once

#include <cstdint>

#include "gate_residual_cuda_status.h"

namespace gatecheck {
namespace cuda_detail {

// Programmatic dependent launch (sm_90): a kernel launched with the
// programmatic-serialization attribute may start while the previous kernel in
// the stream still runs; it must wait here before touching anything that
// kernel writes. Without the attribute both are no-ops.
__device__ __forceinline__ void wait_for_previous_kernel() {
  asm volatile("griddepcontrol.wait;" ::: "memory");
}
__device__ __forceinline__ void let_next_kernel_start() {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

__device__ __forceinline__ bool call_failed(const unsigned long long* status,
                                            unsigned long long epoch) {
  return cuda_status::is_bad(*status, epoch);
}

__device__ __forceinline__ int64_t global_thread() {
  return int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t global_threads() { return int64_t(gridDim.x) * blockDim.x; }

__device__ __forceinline__ void record_bad_row(const int64_t* index, int64_t r, int64_t gates,
                                               unsigned long long* status,
                                               unsigned long long epoch) {
  const int64_t v = index[r];
  if (v < 0 || v >= gates) atomicMax(status, cuda_status::encode(epoch, r));
}

}  // namespace cuda_detail
}  // namespace gatecheck
