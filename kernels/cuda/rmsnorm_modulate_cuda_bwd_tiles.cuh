// rmsnorm_modulate's backward tile kernel (the two passes' second): dshift,
// dscale and dweight partials from the index plan.
#pragma once

#include <cstdint>

#include "../rmsnorm_modulate_order.h"
#include "rmsnorm_modulate_cuda_bwd_terms.cuh"

namespace gatecheck {
namespace rmsnorm_cuda_detail {

constexpr int kTileThreads = 128;
constexpr int kAhead = 4;  // rows of a tile whose loads the tile kernel issues at once (twice that for 16-byte loads)

struct Plan {
  const int *seg_start, *tiles, *tile_start, *multi_start, *rows_sorted, *keys_sorted;
  // The gates the fold writes dshift and dscale for (those without exactly
  // one tile, in gate order), and how many.
  const int *fold_gates, *fold_count;
  const float* rstd;
  float *seg_part, *dw_part;
  int64_t tiles_per_group;
};

// Gate k's tile i, chunk c (its first n columns): dshift and dscale written at
// once where the gate has one tile, else its partials' slot for the fold.
template <class T, bool VEC, int V>
__device__ __forceinline__ void store_tile_sums(const Ptrs& a, const Plan& p, int64_t k, int64_t i, int64_t c, int n,
                                                const float (&sh)[V], const float (&sc)[V]) {
  const int64_t at = k * a.dim + c * V;
  if (p.tiles[k] == 1) {
    store_chunk<T, VEC>(static_cast<T*>(a.dshift), at, n, sh);
    store_chunk<T, VEC>(static_cast<T*>(a.dscale), at, n, sc);
    return;
  }
  const int64_t slot = p.multi_start[k] + i;
#pragma unroll
  for (int e = 0; e < V; ++e)
    if (e < n) {
      p.seg_part[(2 * slot) * a.dim + c * V + e] = sh[e];
      p.seg_part[(2 * slot + 1) * a.dim + c * V + e] = sc[e];
    }
}

// Group grp's dweight partial of 16-byte chunk c (V floats) for the fold.
template <int V>
__device__ __forceinline__ void store_group_sums(const Plan& p, int64_t grp, int64_t dim, int64_t c,
                                                 const float (&dw)[V]) {
  float4* o = reinterpret_cast<float4*>(p.dw_part + grp * dim + c * V);
#pragma unroll
  for (int q = 0; q < V / 4; ++q) o[q] = make_float4(dw[4 * q], dw[4 * q + 1], dw[4 * q + 2], dw[4 * q + 3]);
}

template <class T, bool VEC>
__global__ void __launch_bounds__(kTileThreads) bwd_tile_kernel(Ptrs a, Plan p) {
  if (*a.bad != kNoBadRow) return;
  constexpr int V = VecOf<T>::value;
  const T *x = static_cast<const T*>(a.x), *w = static_cast<const T*>(a.w);
  const T *scale = static_cast<const T*>(a.scale), *g = static_cast<const T*>(a.g);
  const int64_t dim = a.dim, nch = (dim + V - 1) / V;
  const int64_t c = blockIdx.x * int64_t(kTileThreads) + threadIdx.x;
  if (c >= nch) return;
  const int n = int(min64(V, dim - c * V));
  const int64_t ntiles = p.tile_start[a.gates];
  float wv[V];
  load_chunk<T, VEC>(w, c * V, n, wv);
  for (int64_t grp = blockIdx.y; grp * p.tiles_per_group < ntiles; grp += gridDim.y) {
    const int64_t t0 = grp * p.tiles_per_group, t1 = min64(ntiles, t0 + p.tiles_per_group);
    float dw[V];
#pragma unroll
    for (int e = 0; e < V; ++e) dw[e] = 0.0f;
    for (int64_t t = t0; t < t1; ++t) {
      // gate k: the last with tile_start[k] <= t (it has tiles, as tile_start[k + 1] > t)
      int64_t lo = 0, hi = a.gates;
      while (lo < hi) {
        const int64_t mid = (lo + hi + 1) / 2;
        if (p.tile_start[mid] <= t) lo = mid;
        else hi = mid - 1;
      }
      const int64_t k = lo, i = t - p.tile_start[k];
      const int64_t pos0 = p.seg_start[k] + i * kRmsSegTileRows;
      const int64_t pos1 = min64(pos0 + kRmsSegTileRows, p.seg_start[k + 1]);
      float f[V], sh[V], sc[V];
      load_factor<T, VEC>(scale, k * dim + c * V, n, f);
#pragma unroll
      for (int e = 0; e < V; ++e) sh[e] = sc[e] = 0.0f;
      // A tile's rows kAhead at a time (twice that as raw 16-byte loads): every
      // load of a step issued, then the rows summed in batch order.
      constexpr int A = VEC ? 2 * kAhead : kAhead;
      auto sum_row = [&](float rs, const float (&xv)[V], const float (&gv)[V]) {
        add_col_terms<T>(rs, xv, gv, wv, f, sh, sc, dw);
      };
      for (int64_t pos = pos0; pos < pos1; pos += A) {
        int64_t rr[A];
        float rs[A];
#pragma unroll
        for (int q = 0; q < A; ++q) rr[q] = pos + q < pos1 ? p.rows_sorted[pos + q] : -1;
        if constexpr (VEC) {
          uint4 kx[A], kg[A];
#pragma unroll
          for (int q = 0; q < A; ++q)
            if (rr[q] >= 0) {
              rs[q] = p.rstd[rr[q]];
              kx[q] = load_raw(x, rr[q] * dim + c * V);
              kg[q] = load_raw(g, rr[q] * dim + c * V);
            }
#pragma unroll
          for (int q = 0; q < A; ++q)
            if (rr[q] >= 0) {
              float xv[V], gv[V];
              unpack<T>(kx[q], xv);
              unpack<T>(kg[q], gv);
              sum_row(rs[q], xv, gv);
            }
        } else {
          float xv[A][V], gv[A][V];
#pragma unroll
          for (int q = 0; q < A; ++q)
            if (rr[q] >= 0) {
              rs[q] = p.rstd[rr[q]];
              load_chunk<T, VEC>(x, rr[q] * dim + c * V, n, xv[q]);
              load_chunk<T, VEC>(g, rr[q] * dim + c * V, n, gv[q]);
            }
#pragma unroll
          for (int q = 0; q < A; ++q)
            if (rr[q] >= 0) sum_row(rs[q], xv[q], gv[q]);
        }
      }
      store_tile_sums<T, VEC>(a, p, k, i, c, n, sh, sc);
    }
#pragma unroll
    for (int e = 0; e < V; ++e)
      if (e < n) p.dw_part[grp * dim + c * V + e] = dw[e];
  }
}

}  // namespace rmsnorm_cuda_detail
}  // namespace gatecheck
