// rmsnorm_modulate's index check, and the backward plan's per-gate tile counts.
#pragma once

#include <cstdint>

#include "../rmsnorm_modulate_order.h"

namespace gatecheck {
namespace rmsnorm_cuda_detail {

// The index checked (the first bad row kept), and for the backward each
// gate's row count with the sort's keys. A warp's rows of one gate add to
// its count at once: with few gates, atomics on the same word, a row each,
// queue up (9.6 us for 32,768 rows of 9 gates on the H200).
__global__ void check_index_kernel(const int64_t* index, int64_t rows, int64_t gates, unsigned long long* bad,
                                   int* count, int* keys, int* vals) {
  const int lane = int(threadIdx.x & 31);
  for (int64_t r0 = blockIdx.x * int64_t(blockDim.x); r0 < rows; r0 += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = r0 + threadIdx.x;  // every lane of a warp takes each turn: the ballot below
    const int64_t k = r < rows ? index[r] : 0;
    const bool ok = r < rows && k >= 0 && k < gates;
    if (r < rows && !ok) atomicMin(bad, (unsigned long long)r);
    if (!count) continue;
    const unsigned oks = __ballot_sync(0xffffffffu, ok);
    if (!ok) continue;
    const unsigned peers = __match_any_sync(oks, int(k));  // an integer count: the same for any order
    if (__ffs(peers) - 1 == lane) atomicAdd(count + k, __popc(peers));
    keys[r] = int(k);
    vals[r] = int(r);
  }
}

__global__ void tile_counts_kernel(const int* count, int64_t gates, int* tiles, int* multi) {
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k <= gates; k += int64_t(gridDim.x) * blockDim.x) {
    const int n = k < gates ? count[k] : 0;
    const int t = (n + kRmsSegTileRows - 1) / kRmsSegTileRows;
    tiles[k] = t;
    multi[k] = t > 1 ? t : 0;
  }
}

}  // namespace rmsnorm_cuda_detail
}  // namespace gatecheck
