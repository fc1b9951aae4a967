// rmsnorm_modulate's backward in one pass, a chunk a thread (bwd_wide_kernel).
#pragma once

#include <cstdint>

#include "../rmsnorm_modulate_order.h"
#include "rmsnorm_modulate_cuda_bwd_onepass.cuh"

namespace gatecheck {
namespace rmsnorm_cuda_detail {

// The one pass with twice the order's T threads. Each thread owns one chunk's
// column sums, in registers; the row statistics are summed side by side:
// thread p < T sums partial p's squares, thread T + p its w*d*x terms, both
// over partial p's chunks (p, then p + T) in the order's sequence, so the
// folds see the order's partials and the bits are the other kernels'.
// A block walks a run of whole dweight groups (their rows are contiguous in
// the tile order), kWideRows rows of x and g in shared memory (cp.async, a
// thread copying its chunk). Each step, between one barrier and the next:
//   - the next row's statistics, summed and folded in warps;
//   - this row's statistics, from the warp sums the last step left;
//   - this row's dx and column terms.
// The statistics' dependent chain (a row's sums, its trees, its square root
// and divisions) thus overlaps the element work of the row before it, and
// no sum leaves registers until its tile or group ends.
constexpr int kWideRows = 4;  // a row worked, the next summed, two in flight
static_assert(kRmsChunksPerThread == 2, "a partial's chunks are q and q + T: two, which the kernel reads as qc[0..1]");
// Threads of a block in buckets, each with the registers a thread that fit
// the bucket's blocks in an SM's 64K: two of up to 384 threads (3,072
// columns of 16-bit types), one of up to 704 (5,376 columns) or 1,024.
struct WideBucket {
  int threads, registers;
};
constexpr WideBucket kWideBuckets[] = {{384, 80}, {704, 88}, {1024, 64}};

int64_t wide_smem_bytes(int64_t dim, int vec) { return int64_t(kWideRows) * 2 * (dim / vec) * 16; }

template <class T, int REGS>
__global__ void __maxnreg__(REGS) bwd_wide_kernel(Ptrs a, Plan p) {
  if (*a.bad != kNoBadRow) return;
  constexpr int V = VecOf<T>::value, D = kWideRows;
  extern __shared__ uint4 staged[];  // [row % D][x, g][chunk]
  __shared__ float red[2][32];       // a row's warp sums (squares, then w*d*x), by row parity
  const T *x = static_cast<const T*>(a.x), *w = static_cast<const T*>(a.w);
  const T *scale = static_cast<const T*>(a.scale), *g = static_cast<const T*>(a.g);
  T* dx = static_cast<T*>(a.dx);
  const int64_t dim = a.dim;
  const int nch = int(dim / V);
  const int t = int(threadIdx.x), lane = t & 31, warp = t >> 5, P = int(blockDim.x) / 2, nw = P >> 5;
  // This thread's chunk c for dx and the column sums; its partial q and
  // which of the two statistics (wdx) it sums, over chunks q and q + P.
  const int c = t;
  const bool own = c < nch, wdx = t >= P;
  const int q = wdx ? t - P : t;
  const int qc[2] = {q, q + P};  // partial q's chunks; qc[1] is this thread's c where wdx
  const bool qown[2] = {q < nch, q + P < nch};
  const uint4 zero4 = make_uint4(0, 0, 0, 0);

  // The block's groups: a run of about equal count, from the plan's tiles.
  const int64_t ntiles = p.tile_start[a.gates], tpg = p.tiles_per_group;
  const int64_t ngroups = (ntiles + tpg - 1) / tpg, per = (ngroups + gridDim.x - 1) / gridDim.x;
  int64_t grp = int64_t(blockIdx.x) * per;
  const int64_t grp_end = min64(ngroups, grp + per);
  if (grp >= grp_end) return;
  auto pos_of_group = [&](int64_t gr) {
    return gr * tpg < ntiles ? int(tile_first_pos(p, a.gates, gr * tpg)) : int(a.rows);
  };
  const int P0 = pos_of_group(grp), n = pos_of_group(grp_end) - P0;
  int gend = pos_of_group(grp + 1);  // the current group's end position

  auto stage = [&](int i) {
    if (i < n && own) {
      const int64_t row = p.rows_sorted[P0 + i];
      uint4* b = staged + (i % D) * 2 * nch;
      cp_async16(b + c, x + row * dim + int64_t(c) * V);
      cp_async16(b + nch + c, g + row * dim + int64_t(c) * V);
    }
    cp_async_commit();
  };
  // Row i's statistic of this thread's kind, folded over its warp, into
  // red[i & 1]. The factors of the chunks it reads are those of gate fk
  // (wdx threads).
  int fk = -1;
  uint4 fq[2] = {zero4, zero4};
  auto statistic = [&](int i) {
    const uint4* b = staged + (i % D) * 2 * nch;
    if (wdx) {
      const int k = p.keys_sorted[P0 + i];
      if (k != fk) {
        fk = k;
#pragma unroll
        for (int m = 0; m < 2; ++m)
          if (qown[m]) fq[m] = factor_raw<T>(load_raw(scale, int64_t(k) * dim + int64_t(qc[m]) * V));
      }
    }
    float v = 0.0f;
#pragma unroll
    for (int m = 0; m < 2; ++m)
      if (qown[m]) {
        float xv[V];
        unpack<T>(b[qc[m]], xv);
        if (!wdx) {
          add_square_terms(V, xv, v);
        } else {
          float gv[V], wv[V], fv[V];
          unpack<T>(b[nch + qc[m]], gv);
          unpack<T>(load_here(w, int64_t(qc[m]) * V), wv);
          unpack<T>(opaque(fq[m]), fv);
          add_wdx_terms(V, xv, gv, wv, fv, v);
        }
      }
    v = warp_tree(v);
    if (lane == 0) red[i & 1][warp] = v;
  };

#pragma unroll
  for (int i = 0; i < D - 1; ++i) stage(i);
  cp_async_wait<D - 3>();  // rows 0 and 1 in (this thread's copies)
  __syncthreads();
  statistic(0);
  __syncthreads();

  float dw[V], sh[V], sc[V];
#pragma unroll
  for (int e = 0; e < V; ++e) dw[e] = sh[e] = sc[e] = 0.0f;
  int k = -1, ti = -1;
  uint4 fc = zero4;  // the factors of chunk c for gate k
  auto flush_tile = [&] {
    if (k >= 0 && own) store_tile_sums<T, true>(a, p, k, ti, c, V, sh, sc);
  };
  auto flush_group = [&] {
    if (own) store_group_sums(p, grp, dim, c, dw);
  };
  for (int i = 0; i < n; ++i) {
    stage(i + D - 1);  // into row i - 1's buffer, read last before the last barrier
    if (i + 1 < n) statistic(i + 1);
    const float ss = warp_tree(lane < nw ? red[i & 1][lane] : 0.0f);
    const float cs = warp_tree(lane < nw ? red[i & 1][nw + lane] : 0.0f);
    const float rstd = rstd_of(ss, dim, a.eps);
    const float kq = dx_factor(rstd, cs, dim);
    const int pos = P0 + i, kk = p.keys_sorted[pos], tile = (pos - p.seg_start[kk]) / kRmsSegTileRows;
    if (kk != k || tile != ti) {  // a new tile: the last one's sums out; at a new group, dweight's too
      flush_tile();
#pragma unroll
      for (int e = 0; e < V; ++e) sh[e] = sc[e] = 0.0f;
      if (pos == gend) {
        flush_group();
#pragma unroll
        for (int e = 0; e < V; ++e) dw[e] = 0.0f;
        ++grp;
        gend = pos_of_group(grp + 1);
      }
      if (kk != k && own) fc = factor_raw<T>(load_raw(scale, int64_t(kk) * dim + int64_t(c) * V));
      k = kk;
      ti = tile;
    }
    if (own) {
      const uint4* b = staged + (i % D) * 2 * nch;
      const int64_t row = p.rows_sorted[pos];
      float xv[V], gv[V], wv[V], fv[V], o[V];
      unpack<T>(b[c], xv);
      unpack<T>(b[nch + c], gv);
      unpack<T>(load_here(w, int64_t(c) * V), wv);
      unpack<T>(opaque(fc), fv);
      dx_chunk(rstd, kq, xv, gv, wv, fv, o);
      *reinterpret_cast<uint4*>(dx + row * dim + int64_t(c) * V) = round_chunk<T>(o);
      add_col_terms<T>(rstd, xv, gv, wv, fv, sh, sc, dw);
    }
    cp_async_wait<D - 3>();  // row i + 2 in: the next step sums it
    __syncthreads();
  }
  flush_tile();
  flush_group();
}

}  // namespace rmsnorm_cuda_detail
}  // namespace gatecheck
