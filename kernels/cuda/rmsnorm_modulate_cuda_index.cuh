// rmsnorm_modulate's index check, and the backward plan's per-gate tile counts
// and scans.
#pragma once

#include <cstdint>

#include "../rmsnorm_modulate_order.h"
#include "block_scan.cuh"

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

// A gate's rows, tiles, tiles if several, and whether the fold writes it.
struct PlanSums {
  int rows, tiles, multi, fold;
};
__device__ __forceinline__ PlanSums operator+(const PlanSums& a, const PlanSums& b) {
  return PlanSums{a.rows + b.rows, a.tiles + b.tiles, a.multi + b.multi, a.fold + b.fold};
}
__device__ __forceinline__ PlanSums shfl_up(const PlanSums& v, int d) {
  return PlanSums{__shfl_up_sync(0xffffffffu, v.rows, d), __shfl_up_sync(0xffffffffu, v.tiles, d),
                  __shfl_up_sync(0xffffffffu, v.multi, d), __shfl_up_sync(0xffffffffu, v.fold, d)};
}

// The fold writes a gate's dshift and dscale unless its one tile did: gates
// of several tiles (their partials folded) and gates without rows (zeros).
// With one gate a row no gate is left to it, where a walk over every gate's
// elements took most of the backward.
__host__ __device__ __forceinline__ bool folded_gate(int tiles) { return tiles != 1; }
struct FoldedGate {
  const int* tiles;
  __host__ __device__ bool operator()(int k) const { return folded_gate(tiles[k]); }
};

// One block of kPlanScanThreads; thread t owns gates t * kPlanScanPerThread
// and the next ones. Also the fold's gates (FoldedGate), listed in order.
__global__ void __launch_bounds__(kPlanScanThreads)
    plan_scan_kernel(const int* count, int64_t gates, int* tiles, int* seg_start, int* tile_start, int* multi_start,
                     int* fold_gates, int* fold_count) {
  constexpr int K = kPlanScanPerThread;
  using Scan = BlockRecordScan<kPlanScanThreads, PlanSums>;
  __shared__ typename Scan::TempStorage tmp;
  const int64_t k0 = int64_t(threadIdx.x) * K;
  PlanSums own[K], mine{0, 0, 0};
#pragma unroll
  for (int j = 0; j < K; ++j) {
    const int64_t k = k0 + j;
    const int n = k < gates ? count[k] : 0;  // entry `gates` stays 0: the scans' last entry is the total
    const int tt = (n + kRmsSegTileRows - 1) / kRmsSegTileRows;
    own[j] = PlanSums{n, tt, tt > 1 ? tt : 0, k < gates && folded_gate(tt) ? 1 : 0};
    if (k <= gates) tiles[k] = tt;
    mine = mine + own[j];
  }
  PlanSums run, total;
  Scan(tmp).exclusive(mine, run, total);
  if (threadIdx.x == 0) *fold_count = total.fold;
#pragma unroll
  for (int j = 0; j < K; ++j) {
    const int64_t k = k0 + j;
    if (k <= gates) {
      seg_start[k] = run.rows;
      tile_start[k] = run.tiles;
      multi_start[k] = run.multi;
      if (own[j].fold) fold_gates[run.fold] = int(k);
    }
    run = run + own[j];
  }
}

}  // namespace rmsnorm_cuda_detail
}  // namespace gatecheck
