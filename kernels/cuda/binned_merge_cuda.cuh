// The merge of many binned states' element on the device, one loop for the
// combine of ranks' states (binned_state_cuda.cuh) and the fold of a gate's
// tile states (gate_residual_cuda_kernels.cuh). A thread issues
// kMergeInFlight states' loads before it merges any of them: the combine
// reads each state once and is bound by those loads (it runs near the copy
// ceiling). The fold took as long either way (docs/kernel-design.md). And
// the one way every device kernel stores a state's words.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "../binned_sum.h"

namespace gatecheck {
namespace binned_cuda {

constexpr int kMergeInFlight = 8;

// A state's words stored at `to` (16-byte aligned) in two 16-byte stores.
__device__ __forceinline__ void store_state(uint64_t* to, const uint64_t (&w)[kBinnedWords]) {
  ulonglong2* o = reinterpret_cast<ulonglong2*>(to);
  o[0] = make_ulonglong2(w[0], w[1]);
  o[1] = make_ulonglong2(w[2], w[3]);
}

// acc += the n states' words at at, at + stride, ... (stride in words; each
// state 16-byte aligned). Streaming: loads marked evict-first (each state's
// bytes are read once), else read-only cached loads.
template <bool Streaming>
__device__ __forceinline__ void merge_states(BinnedSum& acc, const uint64_t* at, int64_t stride, int32_t n) {
  for (int32_t k0 = 0; k0 < n; k0 += kMergeInFlight) {
    ulonglong2 v[kMergeInFlight][2];
#pragma unroll
    for (int i = 0; i < kMergeInFlight; ++i) {
      if (k0 + i >= n) break;
      const ulonglong2* w = reinterpret_cast<const ulonglong2*>(at + (k0 + i) * stride);
      v[i][0] = Streaming ? __ldcs(w) : __ldg(w);
      v[i][1] = Streaming ? __ldcs(w + 1) : __ldg(w + 1);
    }
#pragma unroll
    for (int i = 0; i < kMergeInFlight; ++i) {
      if (k0 + i >= n) break;
      const uint64_t ws[kBinnedWords] = {v[i][0].x, v[i][0].y, v[i][1].x, v[i][1].y};
      BinnedSum b;
      b.from_words(ws);
      acc.merge(b);
    }
  }
}

}  // namespace binned_cuda
}  // namespace gatecheck
