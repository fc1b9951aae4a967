// rmsnorm_modulate's backward fold: the partials of dweight, dshift and dscale
// summed in the order's order.
#pragma once

#include <cstdint>

#include "../rmsnorm_modulate_order.h"
#include "rmsnorm_modulate_cuda_bwd_tiles.cuh"

namespace gatecheck {
namespace rmsnorm_cuda_detail {

constexpr int kFoldAhead = 16;  // partials the fold loads at once: its sums are chains of hundreds of loads

// The partials folded in order. dweight's columns each sum every group's
// partial, a chain of hundreds to thousands of adds: a block per 32 columns
// stages the groups' rows in shared memory, its eight warps loading the next
// kFoldRows rows while warp 0 adds the last ones, so the chain waits on
// shared memory, not on DRAM (the chain by a thread a column, 32 loads ahead,
// took 99 us at bf16 32768 x 5376 x 9 on the H200: 1,033 groups). dshift and
// dscale of the plan's fold gates, those with several tiles (a thread an
// element, kFoldAhead loads issued at once, then added in order) and those
// without rows (zeros), take the blocks after those. Four blocks an SM (64 registers, 49 KB of shared
// memory each), so that the grid is one wave: with 32 loads ahead the kernel
// took 126 registers, two blocks an SM, and its 357 blocks at bf16 32768 x
// 5376 x 9 ran in 1.35 waves (ncu on the H100: 31.7 us at 65% of DRAM).
constexpr int kFoldThreads = 256, kFoldCols = 32, kFoldRows = 192;  // two buffers of 24 KB
constexpr int kFoldBlocksPerSm = 4;
__host__ __device__ inline int fold_dw_blocks(int64_t dim) { return int((dim + kFoldCols - 1) / kFoldCols); }

template <class T>
__device__ __forceinline__ void fold_dweight(const Ptrs& a, const Plan& p, int64_t groups, int64_t j0) {
  constexpr int W = kFoldThreads / 32, Q = kFoldRows / W;
  __shared__ float rows[2][kFoldRows][kFoldCols];
  const int w = int(threadIdx.x >> 5), lane = int(threadIdx.x & 31);
  const int64_t dim = a.dim, j = j0 + lane;
  const bool col = j < dim;
  float v[Q];
  auto load = [&](int64_t g0) {
#pragma unroll
    for (int q = 0; q < Q; ++q) {
      const int64_t g = g0 + w + q * W;
      v[q] = col && g < groups ? p.dw_part[g * dim + j] : 0.0f;
    }
  };
  auto put = [&](int b) {
#pragma unroll
    for (int q = 0; q < Q; ++q) rows[b][w + q * W][lane] = v[q];
  };
  load(0);
  put(0);
  __syncthreads();
  float acc = 0.0f;
  int b = 0;
  for (int64_t g0 = 0; g0 < groups; g0 += kFoldRows, b ^= 1) {
    const bool more = g0 + kFoldRows < groups;
    if (more) load(g0 + kFoldRows);  // in flight while warp 0 adds
    if (w == 0) {
      const int n = int(min64(kFoldRows, groups - g0));
#pragma unroll 16
      for (int i = 0; i < n; ++i) acc = __fadd_rn(acc, rows[b][i][lane]);
    }
    if (more) put(b ^ 1);  // the buffer warp 0 finished before the last barrier
    __syncthreads();
  }
  if (w == 0 && col) static_cast<T*>(a.dweight)[j] = round_to<T>(acc);
}

template <class T>
__global__ void __launch_bounds__(kFoldThreads, kFoldBlocksPerSm) bwd_fold_kernel(Ptrs a, Plan p) {
  if (*a.bad != kNoBadRow) return;
  const int64_t dim = a.dim, gates = a.gates, total = int64_t(*p.fold_count) * dim;
  const int64_t ntiles = p.tile_start[gates];
  const int dwb = fold_dw_blocks(dim);
  if (int(blockIdx.x) < dwb) {
    fold_dweight<T>(a, p, (ntiles + p.tiles_per_group - 1) / p.tiles_per_group, int64_t(blockIdx.x) * kFoldCols);
    return;
  }
  T *dshift = static_cast<T*>(a.dshift), *dscale = static_cast<T*>(a.dscale);
  const int64_t nb = int64_t(gridDim.x) - dwb;
  for (int64_t e = (blockIdx.x - dwb) * int64_t(blockDim.x) + threadIdx.x; e < total; e += nb * blockDim.x) {
    int64_t i = e / dim, j = e - i * dim;
    const int k = p.fold_gates[i], nt = p.tiles[k];
    float sh = 0.0f, sc = 0.0f;
    const float* part = p.seg_part + 2 * int64_t(p.multi_start[k]) * dim + j;
    for (int i0 = 0; i0 < nt; i0 += kFoldAhead) {
      float vh[kFoldAhead], vc[kFoldAhead];
#pragma unroll
      for (int q = 0; q < kFoldAhead; ++q)
        if (i0 + q < nt) {
          vh[q] = part[2 * int64_t(i0 + q) * dim];
          vc[q] = part[(2 * int64_t(i0 + q) + 1) * dim];
        }
#pragma unroll
      for (int q = 0; q < kFoldAhead; ++q)
        if (i0 + q < nt) {
          sh = __fadd_rn(sh, vh[q]);
          sc = __fadd_rn(sc, vc[q]);
        }
    }
    i = e / dim;  // again, rather than a register kept over the chain
    const int64_t at = int64_t(p.fold_gates[i]) * dim + (e - i * dim);
    dshift[at] = round_to<T>(sh);
    dscale[at] = round_to<T>(sc);
  }
}

}  // namespace rmsnorm_cuda_detail
}  // namespace gatecheck
