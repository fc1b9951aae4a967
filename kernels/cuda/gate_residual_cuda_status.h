// Encoding of the on-device index status word, shared by kernels and host.
// The word is never reset between calls: each call has an epoch (1..kMaxEpoch),
// and a bad row r is recorded with atomicMax as (epoch << kRowBits) | (kRowMask - r).
// A newer epoch is always larger, and within one epoch the smallest bad row
// wins, so the result does not depend on timing. The host clears the word when
// the epoch wraps.
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

inline int64_t decode_row(unsigned long long word) { return int64_t(kRowMask - (word & kRowMask)); }

}  // namespace cuda_status
}  // namespace gatecheck
