// rmsnorm_modulate's index check, and the backward plan's per-gate tile counts
// and scans.
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

// Up to kPlanScanGates gates, the tile counts and the plan's three exclusive
// scans over gates + 1 entries (each gate's first row, first tile, and first
// slot among multi-tile gates) in one block: one launch where
// tile_counts_kernel and three CUB scans took seven, each waiting out the
// last (about 20 us of the plan on the H200 at 9 gates). Integer sums: the
// same values in any order. More gates take the CUB scans, whose blocks
// spread the reads.
constexpr int kPlanScanThreads = 1024, kPlanScanPerThread = 8;
constexpr int64_t kPlanScanGates = int64_t(kPlanScanThreads) * kPlanScanPerThread - 1;

struct PlanSums {
  int rows, tiles, multi;
};
__device__ __forceinline__ PlanSums plan_shfl_up(const PlanSums& v, int d) {
  return PlanSums{__shfl_up_sync(0xffffffffu, v.rows, d), __shfl_up_sync(0xffffffffu, v.tiles, d),
                  __shfl_up_sync(0xffffffffu, v.multi, d)};
}
__device__ __forceinline__ PlanSums plan_add(const PlanSums& a, const PlanSums& b) {
  return PlanSums{a.rows + b.rows, a.tiles + b.tiles, a.multi + b.multi};
}
// Inclusive scan over a warp's lanes.
__device__ __forceinline__ PlanSums plan_warp_scan(PlanSums v, int lane) {
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const PlanSums u = plan_shfl_up(v, d);
    if (lane >= d) v = plan_add(v, u);
  }
  return v;
}

// One block of kPlanScanThreads; thread t owns gates t * kPlanScanPerThread
// and the next ones.
__global__ void __launch_bounds__(kPlanScanThreads)
    plan_scan_kernel(const int* count, int64_t gates, int* tiles, int* seg_start, int* tile_start, int* multi_start) {
  constexpr int K = kPlanScanPerThread;
  __shared__ PlanSums warp_sums[kPlanScanThreads / 32];
  const int t = int(threadIdx.x), lane = t & 31, warp = t >> 5;
  const int64_t k0 = int64_t(t) * K;
  PlanSums own[K], total{0, 0, 0};
#pragma unroll
  for (int j = 0; j < K; ++j) {
    const int64_t k = k0 + j;
    const int n = k < gates ? count[k] : 0;  // entry `gates` stays 0: the scans' last entry is the total
    const int tt = (n + kRmsSegTileRows - 1) / kRmsSegTileRows;
    own[j] = PlanSums{n, tt, tt > 1 ? tt : 0};
    if (k <= gates) tiles[k] = tt;
    total = plan_add(total, own[j]);
  }
  const PlanSums incl = plan_warp_scan(total, lane);
  if (lane == 31) warp_sums[warp] = incl;
  __syncthreads();
  if (warp == 0) {
    const PlanSums w = lane < kPlanScanThreads / 32 ? warp_sums[lane] : PlanSums{0, 0, 0};
    const PlanSums wi = plan_warp_scan(w, lane);
    if (lane < kPlanScanThreads / 32) warp_sums[lane] = wi;
  }
  __syncthreads();
  PlanSums run = plan_add(warp > 0 ? warp_sums[warp - 1] : PlanSums{0, 0, 0},
                          PlanSums{incl.rows - total.rows, incl.tiles - total.tiles, incl.multi - total.multi});
#pragma unroll
  for (int j = 0; j < K; ++j) {
    const int64_t k = k0 + j;
    if (k <= gates) {
      seg_start[k] = run.rows;
      tile_start[k] = run.tiles;
      multi_start[k] = run.multi;
    }
    run = plan_add(run, own[j]);
  }
}

}  // namespace rmsnorm_cuda_detail
}  // namespace gatecheck
