// rmsnorm_modulate's fast kernels: the forward row kernel, the fused backward
// (dx and the dshift/dscale/dweight partials in one pass over x and grad_out)
// and the fold of the partials. The orders are rmsnorm_modulate_order.h's,
// the same as the general kernels', so every path gives the same bits.
//
// Why they are fast (bench notes: kernels/cuda/README.md):
// - a thread keeps its chunks (CPT of them, chunk c = tid + i*T) in registers
//   from the sum of squares to the output: each row is read once;
// - every load of a row (x, shift, scale; grad_out) is issued before the
//   block's reduction, and the forward takes two rows per step (one pair of
//   barriers for both), so the loads of two rows are in flight together;
// - a persistent grid (blocks per SM from the occupancy calculator) walks the
//   rows; w stays in registers across them;
// - the backward walks the order's dweight groups: a block takes a group's
//   tiles (rows sorted by gate) row by row, so the per-column sums of
//   dshift, dscale and dweight come from the registers that dx used.
#pragma once

#include "../rmsnorm_modulate_order.h"
#include "rmsnorm_modulate_cuda_io.cuh"

namespace gatecheck {
namespace rms_cuda {

constexpr unsigned long long kNoBadRow = ~0ull;

struct Ptrs {
  const void *x = nullptr, *w = nullptr, *shift = nullptr, *scale = nullptr, *g = nullptr;
  const int64_t* index = nullptr;
  void *out = nullptr, *dx = nullptr, *dweight = nullptr, *dshift = nullptr, *dscale = nullptr;
  int64_t rows = 0, dim = 0, gates = 0;
  float eps = 0;
  const unsigned long long* bad = nullptr;
};

struct Plan {
  const int *seg_start, *tiles, *tile_start, *multi_start, *rows_sorted;
  const float* rstd;
  float *seg_part, *dw_part;
  int64_t tiles_per_group;
  const int *fold_list, *fold_count;  // the gates with other than one tile (any order), and how many
};

// v rounded to T and back (the formula's intermediate roundings).
template <class T> __device__ __forceinline__ float rn(float v) { return to_float(round_inner<T>(v)); }

// Pairwise tree over a warp: every lane ends with the order's a[0] for its
// warp (xor pairs hold equal sums at each level, addition being commutative).
__device__ __forceinline__ float warp_tree(float v) {
#pragma unroll
  for (int h = 16; h; h >>= 1) v = __fadd_rn(v, __shfl_xor_sync(0xffffffffu, v, h));
  return v;
}

// N row statistics folded by the order's tree (warps, then the warp sums
// padded with +0 to 32); every thread gets all N. sm: N * 33 floats.
template <int N>
__device__ __forceinline__ void block_sum(float (&v)[N], float* sm) {
  const int w = threadIdx.x >> 5, l = threadIdx.x & 31, nw = blockDim.x >> 5;
#pragma unroll
  for (int i = 0; i < N; ++i) {
    v[i] = warp_tree(v[i]);
    if (l == 0) sm[i * 33 + w] = v[i];
  }
  __syncthreads();
  if (w == 0) {
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const float t = warp_tree(l < nw ? sm[i * 33 + l] : 0.0f);
      if (l == 0) sm[i * 33 + 32] = t;
    }
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < N; ++i) v[i] = sm[i * 33 + 32];
}

__device__ __forceinline__ float rstd_of(float ss, int64_t dim, float eps) {
  return __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(__fdiv_rn(ss, float(dim)), eps)));
}

template <class T> __device__ __forceinline__ uint4 load_if(const T* row, int64_t j, int64_t dim) {
  return j < dim ? load_chunk_raw<T>(row, j, dim) : make_uint4(0, 0, 0, 0);
}

// ---- forward ----------------------------------------------------------------
// R rows per step (rows R*q .. R*q + R-1), CPT chunks per thread; at most
// MAXT threads, MINB blocks of them per SM (the register cap that buys it).
template <class T, int CPT, int R, int MAXT, int MINB>
__global__ void __launch_bounds__(MAXT, MINB) fwd_rows_kernel(Ptrs a) {
  if (*a.bad != kNoBadRow) return;
  constexpr int V = Vec<T>::value;
  __shared__ float sm[R * 33];
  const T *x = static_cast<const T*>(a.x), *w = static_cast<const T*>(a.w);
  const T *shift = static_cast<const T*>(a.shift), *scale = static_cast<const T*>(a.scale);
  T* out = static_cast<T*>(a.out);
  const int64_t dim = a.dim;
  uint4 wr[CPT];
#pragma unroll
  for (int i = 0; i < CPT; ++i) wr[i] = load_if(w, int64_t(threadIdx.x + i * blockDim.x) * V, dim);
  // The step's gate indices are loaded one step ahead, so that shift and
  // scale wait on one memory latency per step, not two in a row.
  int64_t tn[R];
#pragma unroll
  for (int k = 0; k < R; ++k) tn[k] = blockIdx.x * int64_t(R) + k < a.rows ? a.index[blockIdx.x * int64_t(R) + k] : 0;
  for (int64_t q = blockIdx.x; q * R < a.rows; q += gridDim.x) {
    uint4 xr[R][CPT], shr[R][CPT], scr[R][CPT];
    float s[R];
#pragma unroll
    for (int k = 0; k < R; ++k) {
      const int64_t r = q * R + k, rn_ = (q + gridDim.x) * R + k;
      const bool live = r < a.rows;
      const int64_t t = tn[k];
      tn[k] = rn_ < a.rows ? a.index[rn_] : 0;
#pragma unroll
      for (int i = 0; i < CPT; ++i) {
        const int64_t j = int64_t(threadIdx.x + i * blockDim.x) * V;
        const bool in = live && j < dim;
        xr[k][i] = in ? load_chunk_raw(x + r * dim, j, dim) : make_uint4(0, 0, 0, 0);
        shr[k][i] = in ? load_chunk_raw(shift + t * dim, j, dim) : make_uint4(0, 0, 0, 0);
        scr[k][i] = in ? load_chunk_raw(scale + t * dim, j, dim) : make_uint4(0, 0, 0, 0);
      }
    }
#pragma unroll
    for (int k = 0; k < R; ++k) {
      s[k] = 0.0f;
#pragma unroll
      for (int i = 0; i < CPT; ++i) {
        const int64_t j = int64_t(threadIdx.x + i * blockDim.x) * V;
#pragma unroll
        for (int e = 0; e < V; ++e) {
          const float v = elem<T>(xr[k][i], e);
          if (j + e < dim) s[k] = __fadd_rn(s[k], __fmul_rn(v, v));
        }
      }
    }
    block_sum<R>(s, sm);
#pragma unroll
    for (int k = 0; k < R; ++k) {
      const int64_t r = q * R + k;
      if (r >= a.rows) break;
      const float rstd = rstd_of(s[k], dim, a.eps);
#pragma unroll
      for (int i = 0; i < CPT; ++i) {
        const int64_t j = int64_t(threadIdx.x + i * blockDim.x) * V;
        if (j >= dim) break;
        float o[V];
#pragma unroll
        for (int e = 0; e < V; ++e) {
          const float nn = rn<T>(__fmul_rn(elem<T>(wr[i], e), __fmul_rn(rstd, elem<T>(xr[k][i], e))));
          const float f = rn<T>(__fadd_rn(1.0f, elem<T>(scr[k][i], e)));
          o[e] = __fadd_rn(rn<T>(__fmul_rn(nn, f)), elem<T>(shr[k][i], e));
        }
        store_chunk_raw(out + r * dim, j, dim, pack<T>(o));
      }
    }
  }
}

// ---- backward, fused ----------------------------------------------------------
// A block per dweight group (grid-stride): the group's tiles, each tile's rows
// RB at a time; per row dx (the row's order), then the row joins the column
// sums in the order's row order. The column sums (dshift, dscale of the tile;
// dweight of the group) live in shared memory, each thread's own slice, so no
// barrier guards them and the registers stay few enough for two blocks per
// SM: one block's loads overlap the other's arithmetic.
template <class T>
__device__ __forceinline__ void store_part(float* p, int64_t j, int64_t dim, const float (&v)[Vec<T>::value]) {
  constexpr int V = Vec<T>::value;
  if (j + V <= dim && (reinterpret_cast<uintptr_t>(p + j) & 15u) == 0) {
#pragma unroll
    for (int e = 0; e < V; e += 4) *reinterpret_cast<float4*>(p + j + e) = make_float4(v[e], v[e + 1], v[e + 2], v[e + 3]);
    return;
  }
#pragma unroll
  for (int e = 0; e < V; ++e)
    if (j + e < dim) p[j + e] = v[e];
}

// Sum s (0 dshift, 1 dscale, 2 dweight), chunk i, elements 4h .. 4h+3 of the
// calling thread: consecutive float4s across a warp (no bank conflicts).
template <int CPT, int V>
__device__ __forceinline__ float4& acc_at(float4* acc, int s, int i, int h) {
  return acc[((s * CPT + i) * (V / 4) + h) * int(blockDim.x) + int(threadIdx.x)];
}

template <int CPT, int V>
__device__ __forceinline__ void acc_zero(float4* acc, int s) {
#pragma unroll
  for (int i = 0; i < CPT; ++i)
#pragma unroll
    for (int h = 0; h < V / 4; ++h) acc_at<CPT, V>(acc, s, i, h) = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
}

template <int CPT, int V>
__device__ __forceinline__ void acc_read(float4* acc, int s, int i, float (&v)[V]) {
#pragma unroll
  for (int h = 0; h < V / 4; ++h) {
    const float4 q = acc_at<CPT, V>(acc, s, i, h);
    v[4 * h] = q.x, v[4 * h + 1] = q.y, v[4 * h + 2] = q.z, v[4 * h + 3] = q.w;
  }
}

__device__ __forceinline__ float& comp(float4& q, int e) { return e == 0 ? q.x : e == 1 ? q.y : e == 2 ? q.z : q.w; }

// REGS: the register cap (__maxnreg__: launch bounds would round 672 threads
// up to 768 and cap at 40); 48 fits two blocks of 672 threads on an SM.
template <class T, int CPT, int RB, int REGS>
__global__ void __maxnreg__(REGS) bwd_fused_kernel(Ptrs a, Plan p) {
  if (*a.bad != kNoBadRow) return;
  constexpr int V = Vec<T>::value;
  __shared__ float sm[2 * RB * 33];
  extern __shared__ float4 acc[];  // 3 * CPT * V / 4 float4s a thread
  const T *x = static_cast<const T*>(a.x), *w = static_cast<const T*>(a.w);
  const T *scale = static_cast<const T*>(a.scale), *g = static_cast<const T*>(a.g);
  T *dx = static_cast<T*>(a.dx), *dshift = static_cast<T*>(a.dshift), *dscale = static_cast<T*>(a.dscale);
  const int64_t dim = a.dim, ntiles = p.tile_start[a.gates];
  uint4 wr[CPT];
#pragma unroll
  for (int i = 0; i < CPT; ++i) wr[i] = load_if(w, int64_t(threadIdx.x + i * blockDim.x) * V, dim);
  for (int64_t grp = blockIdx.x; grp * p.tiles_per_group < ntiles; grp += gridDim.x) {
    const int64_t t0 = grp * p.tiles_per_group;
    const int64_t t1 = t0 + p.tiles_per_group < ntiles ? t0 + p.tiles_per_group : ntiles;
    acc_zero<CPT, V>(acc, 2);
    int64_t k = 0;  // the gate of tile t
    for (int64_t t = t0; t < t1; ++t) {
      // gate k: the last with tile_start[k] <= t (it has tiles, as
      // tile_start[k + 1] > t). The group's tiles are consecutive, so after
      // the first the gate is this tile's or the next one's (a gate a row:
      // two loads, not a binary search's 15 dependent ones); else a search
      // from there. tile_start[gates] = ntiles > t bounds every index.
      const bool same = t > t0 && p.tile_start[k + 1] > t;
      const bool next = t > t0 && !same && p.tile_start[k + 2] > t;
      if (next) {
        k = k + 1;
      } else if (!same) {
        int64_t lo = t > t0 ? k + 1 : 0, hi = a.gates;
        while (lo < hi) {
          const int64_t mid = (lo + hi + 1) / 2;
          if (p.tile_start[mid] <= t) lo = mid;
          else hi = mid - 1;
        }
        k = lo;
      }
      const int64_t it = t - p.tile_start[k];
      const int64_t pos0 = p.seg_start[k] + it * kRmsSegTileRows;
      const int64_t pos1 = pos0 + kRmsSegTileRows < p.seg_start[k + 1] ? pos0 + kRmsSegTileRows : p.seg_start[k + 1];
      uint4 scr[CPT];
#pragma unroll
      for (int i = 0; i < CPT; ++i) scr[i] = load_if(scale + k * dim, int64_t(threadIdx.x + i * blockDim.x) * V, dim);
      acc_zero<CPT, V>(acc, 0);
      acc_zero<CPT, V>(acc, 1);
      // The step's row numbers are loaded one step ahead (within the tile), so
      // that x and grad_out wait on one memory latency per step, not two.
      int64_t rn_[RB];
#pragma unroll
      for (int h = 0; h < RB; ++h) rn_[h] = pos0 + h < pos1 ? p.rows_sorted[pos0 + h] : 0;
      for (int64_t pos = pos0; pos < pos1; pos += RB) {
        const int nr = pos1 - pos < RB ? int(pos1 - pos) : RB;  // rows this step (block-uniform)
        int64_t rr[RB];
        uint4 xr[RB][CPT], gr[RB][CPT];
#pragma unroll
        for (int h = 0; h < RB; ++h) {
          rr[h] = rn_[h];
          rn_[h] = pos + RB + h < pos1 ? p.rows_sorted[pos + RB + h] : 0;
#pragma unroll
          for (int i = 0; i < CPT; ++i) {
            const int64_t j = int64_t(threadIdx.x + i * blockDim.x) * V;
            const bool in = h < nr && j < dim;
            xr[h][i] = in ? load_chunk_raw(x + rr[h] * dim, j, dim) : make_uint4(0, 0, 0, 0);
            gr[h][i] = in ? load_chunk_raw(g + rr[h] * dim, j, dim) : make_uint4(0, 0, 0, 0);
          }
        }
        float st[2 * RB];  // sum x^2, sum w*d*x of each row
#pragma unroll
        for (int h = 0; h < RB; ++h) {
          st[2 * h] = st[2 * h + 1] = 0.0f;
#pragma unroll
          for (int i = 0; i < CPT; ++i) {
            const int64_t j = int64_t(threadIdx.x + i * blockDim.x) * V;
#pragma unroll
            for (int e = 0; e < V; ++e) {
              const float xv = elem<T>(xr[h][i], e);
              const float d = __fmul_rn(elem<T>(gr[h][i], e), rn<T>(__fadd_rn(1.0f, elem<T>(scr[i], e))));
              if (j + e < dim) {
                st[2 * h] = __fadd_rn(st[2 * h], __fmul_rn(xv, xv));
                st[2 * h + 1] = __fadd_rn(st[2 * h + 1], __fmul_rn(__fmul_rn(elem<T>(wr[i], e), d), xv));
              }
            }
          }
        }
        block_sum<2 * RB>(st, sm);
        // dx, and each row's rstd and its dx coefficient kept for the sums.
        float rstd[RB];
#pragma unroll
        for (int h = 0; h < RB; ++h) {
          rstd[h] = rstd_of(st[2 * h], dim, a.eps);
          if (h >= nr) continue;
          const float kk = __fdiv_rn(__fmul_rn(__fmul_rn(__fmul_rn(rstd[h], rstd[h]), rstd[h]), st[2 * h + 1]), float(dim));
#pragma unroll
          for (int i = 0; i < CPT; ++i) {
            const int64_t j = int64_t(threadIdx.x + i * blockDim.x) * V;
            if (j >= dim) continue;
            // dx, packed a word at a time (fewer live registers than V floats)
            uint32_t o[4];
#pragma unroll
            for (int m = 0; m < 4; ++m) {
              constexpr int P = sizeof(T) == 4 ? 1 : 2;  // elements a word
              float y[2] = {0.0f, 0.0f};
#pragma unroll
              for (int c = 0; c < P; ++c) {
                const int e = m * P + c;
                const float xv = elem<T>(xr[h][i], e), wv = elem<T>(wr[i], e);
                const float d = __fmul_rn(elem<T>(gr[h][i], e), rn<T>(__fadd_rn(1.0f, elem<T>(scr[i], e))));
                y[c] = __fsub_rn(__fmul_rn(__fmul_rn(rstd[h], wv), d), __fmul_rn(xv, kk));
              }
              o[m] = pack2<T>(y[0], y[1]);
            }
            store_chunk_raw(dx + rr[h] * dim, j, dim, make_uint4(o[0], o[1], o[2], o[3]));
          }
        }
        // The column sums, rows in order; one float4 of one sum at a time.
#pragma unroll
        for (int i = 0; i < CPT; ++i) {
#pragma unroll
          for (int q = 0; q < V / 4; ++q) {
            float4 sh = acc_at<CPT, V>(acc, 0, i, q), sc = acc_at<CPT, V>(acc, 1, i, q), dw = acc_at<CPT, V>(acc, 2, i, q);
#pragma unroll
            for (int h = 0; h < RB; ++h) {
              if (h >= nr) continue;
#pragma unroll
              for (int c = 0; c < 4; ++c) {
                const int e = 4 * q + c;
                const float xv = elem<T>(xr[h][i], e), gv = elem<T>(gr[h][i], e), wv = elem<T>(wr[i], e);
                const float d = __fmul_rn(gv, rn<T>(__fadd_rn(1.0f, elem<T>(scr[i], e))));
                comp(sh, c) = __fadd_rn(comp(sh, c), gv);
                comp(sc, c) = __fadd_rn(comp(sc, c), __fmul_rn(gv, rn<T>(__fmul_rn(wv, __fmul_rn(rstd[h], xv)))));
                comp(dw, c) = __fadd_rn(comp(dw, c), __fmul_rn(__fmul_rn(d, xv), rstd[h]));
              }
            }
            acc_at<CPT, V>(acc, 0, i, q) = sh;
            acc_at<CPT, V>(acc, 1, i, q) = sc;
            acc_at<CPT, V>(acc, 2, i, q) = dw;
          }
        }
      }
#pragma unroll
      for (int i = 0; i < CPT; ++i) {
        const int64_t j = int64_t(threadIdx.x + i * blockDim.x) * V;
        if (j >= dim) continue;
        float sh[V], sc[V];
        acc_read<CPT, V>(acc, 0, i, sh);
        acc_read<CPT, V>(acc, 1, i, sc);
        if (p.tiles[k] == 1) {
          store_chunk_raw(dshift + k * dim, j, dim, pack<T>(sh));
          store_chunk_raw(dscale + k * dim, j, dim, pack<T>(sc));
        } else {
          const int64_t slot = p.multi_start[k] + it;
          store_part<T>(p.seg_part + (2 * slot) * dim, j, dim, sh);
          store_part<T>(p.seg_part + (2 * slot + 1) * dim, j, dim, sc);
        }
      }
    }
#pragma unroll
    for (int i = 0; i < CPT; ++i) {
      const int64_t j = int64_t(threadIdx.x + i * blockDim.x) * V;
      if (j >= dim) continue;
      float dw[V];
      acc_read<CPT, V>(acc, 2, i, dw);
      store_part<T>(p.dw_part + grp * dim, j, dim, dw);
    }
  }
}

// Dynamic shared memory of the fused backward at `threads`.
template <class T, int CPT> constexpr size_t fused_smem(int threads) {
  return size_t(3) * CPT * Vec<T>::value * sizeof(float) * size_t(threads);
}

// ---- folds --------------------------------------------------------------------
// Entry e (blockIdx.y, grid-stride) of the fold list: a listed gate's dshift
// and dscale (its tiles' partials; none: zeros), or, last, dweight (the
// groups'). Gates with one tile were written by it and are not listed, so a
// gate a row costs nothing here. Each sum runs in order from +0, 32 columns
// a block: the 32 x 32 threads load 128 partials of their columns at once
// (coalesced along the columns), one warp adds them in order; so a column's
// sequential sum never waits on one load at a time.
constexpr int kFoldRows = 32, kFoldDepth = 4;

template <class T>
__global__ void __launch_bounds__(1024) fold_kernel(Ptrs a, Plan p) {
  if (*a.bad != kNoBadRow) return;
  __shared__ float sm[kFoldDepth * kFoldRows][33];
  const int64_t dim = a.dim, ntiles = p.tile_start[a.gates];
  const int64_t groups = (ntiles + p.tiles_per_group - 1) / p.tiles_per_group;
  const int64_t entries = int64_t(*p.fold_count) + 1;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t j = blockIdx.x * int64_t(32) + tx;
  for (int64_t en = blockIdx.y; en < entries; en += gridDim.y) {
    const bool is_dw = en == entries - 1;
    const int64_t k = is_dw ? 0 : p.fold_list[en];
    const int64_t n = is_dw ? groups : p.tiles[k];
    for (int part = 0; part < (is_dw ? 1 : 2); ++part) {
      const bool is_sc = part == 1;
      const float* base = is_dw ? p.dw_part : p.seg_part + (2 * int64_t(p.multi_start[k]) + (is_sc ? 1 : 0)) * dim;
      const int64_t stride = is_dw ? dim : 2 * dim;
      float acc = 0.0f;
      for (int64_t b0 = 0; b0 < n; b0 += kFoldDepth * kFoldRows) {
#pragma unroll
        for (int u = 0; u < kFoldDepth; ++u) {
          const int64_t b = b0 + u * kFoldRows + ty;
          sm[u * kFoldRows + ty][tx] = b < n && j < dim ? base[b * stride + j] : 0.0f;
        }
        __syncthreads();
        if (ty == 0) {
          const int64_t m = n - b0 < kFoldDepth * kFoldRows ? n - b0 : kFoldDepth * kFoldRows;
          for (int i = 0; i < m; ++i) acc = __fadd_rn(acc, sm[i][tx]);
        }
        __syncthreads();
      }
      if (ty == 0 && j < dim) {
        T* o = static_cast<T*>(is_dw ? a.dweight : is_sc ? a.dscale : a.dshift);
        o[(is_dw ? 0 : k * dim) + j] = round_to<T>(acc);
      }
    }
  }
}

}  // namespace rms_cuda
}  // namespace gatecheck
