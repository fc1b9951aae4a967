// Encoding of the on-device index status word, shared by kernels and host.
// The word is not reset between calls: each call has an epoch (1..kMaxEpoch),
// and a bad row r is recorded as (epoch << kRowBits) | (kRowMask - r) by an
// integer compare-and-swap that replaces another epoch's record and, within
// one epoch, keeps the larger word: the smallest bad row wins, so the result
// does not depend on timing. The host clears the word when the epoch wraps,
// and when it has taken a report (below).
#pragma once

#include <cstdint>

namespace gatecheck {
namespace cuda_status {

constexpr int kRowBits = 44;
constexpr unsigned long long kRowMask = (1ull << kRowBits) - 1;
constexpr unsigned long long kMaxEpoch = (1ull << (64 - kRowBits)) - 1;
constexpr int64_t kMaxRows = int64_t(kRowMask);  // rows must be below this

#if defined(__CUDACC__)
__host__ __device__ __forceinline__
#else
inline
#endif
unsigned long long encode(unsigned long long epoch, int64_t row) {
  return (epoch << kRowBits) | (kRowMask - (unsigned long long)row);
}

#if defined(__CUDACC__)
__host__ __device__ __forceinline__
#else
inline
#endif
bool is_bad(unsigned long long word, unsigned long long epoch) {
  return (word >> kRowBits) == epoch;
}

#if defined(__CUDACC__)
__host__ __device__ __forceinline__
#else
inline
#endif
int64_t decode_row(unsigned long long word) {
  return int64_t(kRowMask - (word & kRowMask));
}

// A failed call's report, for callers that do not synchronise: pinned host
// memory mapped into the device, one per stream. The last kernel of a call
// whose index check failed fills it (one thread; nothing if it is still
// filled), `filled` last, after a system-wide fence; the host reads it
// without a sync and clears `filled` once it has raised the error. Every
// op's kernels on the stream share it (and the status word): `op` names the
// op whose call failed, a static host string, or null for gate_residual's
// kernels, which leave the name to the taker.
enum ReportedBy : int32_t { kReportedByForward = 1, kReportedByBackward = 2 };
struct Report {
  unsigned long long word;  // the status word: epoch and first bad row
  long long value;          // index[row] as the call read it
  long long gates;
  const char* op;           // the failed op's name, or null (gate_residual's)
  int32_t by;               // ReportedBy
  volatile int32_t filled;  // 0: empty, 1: the fields above hold a report
};

}  // namespace cuda_status
}  // namespace gatecheck
