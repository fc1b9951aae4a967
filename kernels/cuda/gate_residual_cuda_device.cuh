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

// Records bad row r of the call with `epoch`: a record of another call is
// replaced, one of this call kept where its row is smaller (integer
// compare-and-swap). The calls on a stream run one after another, so another
// epoch's record is an earlier call's, done with; replacing it, rather than
// keeping the larger word, keeps a CUDA graph's launch (its epochs fixed at
// capture) from losing its record to that of a later plain call.
static __device__ __noinline__ void record_bad(unsigned long long* status, unsigned long long epoch, int64_t r) {
  const unsigned long long mine = cuda_status::encode(epoch, r);
  unsigned long long seen = *(volatile unsigned long long*)status;
  while (!(cuda_status::is_bad(seen, epoch) && seen >= mine)) {
    const unsigned long long before = atomicCAS(status, seen, mine);
    if (before == seen) return;
    seen = before;
  }
}

__device__ __forceinline__ void record_bad_row(const int64_t* index, int64_t r, int64_t gates,
                                               unsigned long long* status,
                                               unsigned long long epoch) {
  const int64_t v = index[r];
  if (v < 0 || v >= gates) record_bad(status, epoch, r);
}

// Called by one thread of a failed call's last kernel, with the call's final
// status word and the index value at its row: fills the stream's report
// (pinned host memory, see cuda_status::Report) unless the host has not yet
// taken the one before. Null report: nothing to do. `op`: the op's name
// (a static host string) for the message, or null: the taker names it.
__device__ __forceinline__ void report_failed_call(cuda_status::Report* report, unsigned long long word,
                                                   long long value, int64_t gates, int32_t by,
                                                   const char* op = nullptr) {
  if (!report || report->filled) return;
  volatile cuda_status::Report* r = report;
  r->word = word;
  r->value = value;
  r->gates = gates;
  r->op = op;
  r->by = by;
  __threadfence_system();  // the fields before the flag, as the host sees them
  r->filled = 1;
}

// The same from the status word of a call that failed (call_failed is true).
__device__ __forceinline__ void report_failed_call(cuda_status::Report* report, const unsigned long long* status,
                                                   const int64_t* index, int64_t gates, int32_t by) {
  if (!report) return;
  const unsigned long long word = *(volatile const unsigned long long*)status;
  report_failed_call(report, word, index[cuda_status::decode_row(word)], gates, by);
}

// A call's last kernel: true when an earlier kernel of the call failed
// (every thread then returns), block (0, 0) having reported it. `a` holds the
// call's status, epoch, report, index and gates.
template <class Args>
__device__ __forceinline__ bool last_kernel_found_failure(const Args& a, int32_t by) {
  if (!call_failed(a.status, a.epoch)) return false;
  if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0) report_failed_call(a.report, a.status, a.index, a.gates, by);
  return true;
}

}  // namespace cuda_detail
}  // namespace gatecheck
