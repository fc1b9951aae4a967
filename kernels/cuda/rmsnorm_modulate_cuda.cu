// rmsnorm_modulate's CUDA kernels. The orders of every reduction are
// rmsnorm_modulate_order.h's; the host twin (kernels/host) follows them.
//
// Forward: one block per row (grid-stride over rows), T = rms_row_threads(dim)
// threads; thread t sums the squares of chunks t, t + T, ... then the block
// folds the partials by a fixed tree. Backward: the same row kernel for dx
// (sum x^2 and sum w*d*x together) also stores rstd; an index plan (the rows
// sorted by gate, stable, cut into tiles of kRmsSegTileRows) feeds a tile
// kernel that sums dshift, dscale (per tile) and dweight (per group of tiles)
// in fp32 with one thread per chunk of columns; a last kernel folds the
// partials in order. No float atomics: every bit is fixed by the call.
// Vector loads (16 bytes) only where every tensor is 16-byte aligned and
// dim is a multiple of the chunk; otherwise element loads, same order. With
// vector loads of 16-bit types the forward rounds pairs of elements in packed
// instructions (rmsnorm_modulate_cuda_pair.cuh), the same bits. A one-pass
// backward (bwd_fused_kernel) is opt-in: slower than the two passes on the
// H200 (kernels/cuda/README.md).
#include "rmsnorm_modulate_cuda.h"

#include <cuda_runtime.h>

#include <atomic>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cstdint>
#include <string>
#include <vector>

#include "../gate_residual_dtype.h"
#include "../rmsnorm_modulate.h"
#include "../rmsnorm_modulate_order.h"
#include "rmsnorm_modulate_cuda_pair.cuh"
#include "rmsnorm_modulate_cuda_rstd.h"

namespace gatecheck {
namespace {

constexpr unsigned long long kNoBadRow = ~0ull;
constexpr int kTileThreads = 128;
constexpr int kAhead = 4;  // rows of a tile whose loads the tile kernel issues at once (twice that for 16-byte loads)
constexpr int kFoldAhead = 32;  // partials the fold loads at once: its sums are chains of hundreds of loads
constexpr int kMaxGridRows = 65535;  // blocks of the row kernels; more rows loop (grid-stride)

struct Ptrs {
  const void *x = nullptr, *w = nullptr, *shift = nullptr, *scale = nullptr, *g = nullptr;
  const int64_t* index = nullptr;
  void *out = nullptr, *dx = nullptr, *dweight = nullptr, *dshift = nullptr, *dscale = nullptr;
  int64_t rows = 0, dim = 0, gates = 0;
  float eps = 0;
  const unsigned long long* bad = nullptr;
};

template <class T> struct VecOf { static constexpr int value = 16 / int(sizeof(T)); };

template <class T, bool VEC>
__device__ __forceinline__ void load_chunk(const T* p, int64_t j0, int n, float (&v)[VecOf<T>::value]) {
  constexpr int V = VecOf<T>::value;
  if constexpr (VEC) {
    union { uint4 u; T t[V]; } b;
    b.u = __ldg(reinterpret_cast<const uint4*>(p + j0));
#pragma unroll
    for (int e = 0; e < V; ++e) v[e] = to_float(b.t[e]);
  } else {
#pragma unroll
    for (int e = 0; e < V; ++e) v[e] = e < n ? to_float(p[j0 + e]) : 0.0f;
  }
}

template <class T, bool VEC>
__device__ __forceinline__ void store_chunk(T* p, int64_t j0, int n, const float (&v)[VecOf<T>::value]) {
  constexpr int V = VecOf<T>::value;
  if constexpr (VEC) {
    union { uint4 u; T t[V]; } b;
#pragma unroll
    for (int e = 0; e < V; ++e) b.t[e] = round_to<T>(v[e]);
    *reinterpret_cast<uint4*>(p + j0) = b.u;
  } else {
#pragma unroll
    for (int e = 0; e < V; ++e)
      if (e < n) p[j0 + e] = round_to<T>(v[e]);
  }
}

// v rounded to T and back (the formula's intermediate roundings).
template <class T> __device__ __forceinline__ float rn(float v) { return to_float(round_inner<T>(v)); }

// Pairwise tree over a warp: lane i ends with the order's a[0] for its warp
// (xor pairs hold equal sums at each level, addition being commutative).
__device__ __forceinline__ float warp_tree(float v) {
#pragma unroll
  for (int h = 16; h; h >>= 1) v = __fadd_rn(v, __shfl_xor_sync(0xffffffffu, v, h));
  return v;
}

// Two row statistics folded by the order's tree; every thread of the row's
// nt threads gets both (t: the thread's place among them). Every thread of the
// block calls it: its barriers are the block's.
__device__ __forceinline__ float2 block_sum2(float a, float b, float2* sm, int t, int nt) {
  a = warp_tree(a);
  b = warp_tree(b);
  const int w = t >> 5, l = t & 31, nw = nt >> 5;
  if (l == 0) sm[w] = make_float2(a, b);
  __syncthreads();
  if (w == 0) {
    const float2 v = l < nw ? sm[l] : make_float2(0.0f, 0.0f);
    a = warp_tree(v.x);
    b = warp_tree(v.y);
    if (l == 0) sm[32] = make_float2(a, b);
  }
  __syncthreads();
  return sm[32];
}
__device__ __forceinline__ float2 block_sum2(float a, float b, float2* sm) {
  return block_sum2(a, b, sm, int(threadIdx.x), int(blockDim.x));
}

__device__ __forceinline__ float rstd_of(float ss, int64_t dim, float eps) {
  return __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(__fdiv_rn(ss, float(dim)), eps)));
}

__device__ __forceinline__ int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

// ---- index check and plan ---------------------------------------------------

__global__ void check_index_kernel(const int64_t* index, int64_t rows, int64_t gates, unsigned long long* bad,
                                   int* count, int* keys, int* vals) {
  for (int64_t r = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; r < rows; r += int64_t(gridDim.x) * blockDim.x) {
    const int64_t k = index[r];
    if (k < 0 || k >= gates) {
      atomicMin(bad, (unsigned long long)r);
      continue;
    }
    if (count) {
      atomicAdd(count + k, 1);  // an integer count: the same for any order
      keys[r] = int(k);
      vals[r] = int(r);
    }
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

// ---- the row kernels ---------------------------------------------------------
//
// Thread t of a row's T = rms_row_threads(dim) threads owns chunks t, t + T,
// ... (its partial of the order). T is chosen so that a thread owns about
// kRmsChunksPerThread chunks; where every tensor takes 16-byte loads, the
// first KEEP of them stay in registers, as loaded, from the reduction to the
// second pass, so that x (and g) are read from memory once. Every load of a
// row is issued before its reduction, so a block waits on one memory latency.

template <class T>
__device__ __forceinline__ void unpack(const uint4& u, float (&v)[VecOf<T>::value]) {
  union { uint4 u; T t[VecOf<T>::value]; } b;
  b.u = u;
#pragma unroll
  for (int e = 0; e < VecOf<T>::value; ++e) v[e] = to_float(b.t[e]);
}

template <class T>
__device__ __forceinline__ uint4 load_raw(const T* p, int64_t j0) {
  return __ldg(reinterpret_cast<const uint4*>(p + j0));
}

// A load of data read once (x in the forward): not kept in L1, which is left
// to w, shift and scale, read by every row.
template <class T>
__device__ __forceinline__ uint4 load_once(const T* p, int64_t j0) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p + j0));
  return v;
}

// A forward chunk of 16-bit values from its raw 16-byte loads, with the
// pairs' roundings packed (rmsnorm_modulate_cuda_pair.cuh): the float path's
// bits in fewer instructions (the forward is issue-bound on the H200).
template <class T>
__device__ __forceinline__ uint4 fwd_chunk_packed(float rstd, const uint4& xr, const uint4& wr, const uint4& shr,
                                                  const uint4& scr) {
  using P = Pair<T>;
  const uint4 f = factor_chunk<T>(scr);
  float o[8];
  uint32_t r[4];
  bool nan = false;
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    const uint32_t xw = word(xr, q), ww = word(wr, q), sw = word(shr, q);
    const float a0 = __fmul_rn(P::lo(ww), __fmul_rn(rstd, P::lo(xw)));
    const float a1 = __fmul_rn(P::hi(ww), __fmul_rn(rstd, P::hi(xw)));
    const uint32_t nf = P::mul(P::rn(a0, a1), word(f, q));  // rn(rn(w * rstd * x) * f)
    o[2 * q] = __fadd_rn(P::lo(nf), P::lo(sw));
    o[2 * q + 1] = __fadd_rn(P::hi(nf), P::hi(sw));
    nan |= (o[2 * q] != o[2 * q]) | (o[2 * q + 1] != o[2 * q + 1]);
    r[q] = P::rn(o[2 * q], o[2 * q + 1]);
  }
  if (nan) {  // round_to's canonical NaN
#pragma unroll
    for (int q = 0; q < 4; ++q)
      r[q] = uint32_t(round_to<T>(o[2 * q]).bits) | uint32_t(round_to<T>(o[2 * q + 1]).bits) << 16;
  }
  return make_uint4(r[0], r[1], r[2], r[3]);
}

// Launch bounds: with chunks kept (few threads a row, many registers each) or
// not (up to 1,024 threads a row).
constexpr int bounds_for(int keep) { return keep > 0 ? 256 : 1024; }

template <class T, bool VEC, int KEEP>
__global__ void __launch_bounds__(bounds_for(KEEP)) fwd_kernel(Ptrs a) {
  static_assert(VEC || KEEP == 0, "chunks are kept only where they load as 16 bytes");
  if (*a.bad != kNoBadRow) return;
  constexpr int V = VecOf<T>::value;
  __shared__ float2 sm[33];
  const T *x = static_cast<const T*>(a.x), *w = static_cast<const T*>(a.w);
  const T *shift = static_cast<const T*>(a.shift), *scale = static_cast<const T*>(a.scale);
  T* out = static_cast<T*>(a.out);
  const int64_t dim = a.dim, nch = (dim + V - 1) / V, nt = blockDim.x, t0 = threadIdx.x;
  for (int64_t r = blockIdx.x; r < a.rows; r += gridDim.x) {
    const int64_t row = r * dim;
    const int64_t gate = a.index[r];  // needed after the reduction: loaded with x
    uint4 kept[KEEP > 0 ? KEEP : 1];
#pragma unroll
    for (int i = 0; i < KEEP; ++i)
      if (t0 + i * nt < nch) kept[i] = load_once(x, row + (t0 + i * nt) * V);
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < KEEP; ++i)
      if (t0 + i * nt < nch) {
        float v[V];
        unpack<T>(kept[i], v);
#pragma unroll
        for (int e = 0; e < V; ++e) s = __fadd_rn(s, __fmul_rn(v[e], v[e]));
      }
    for (int64_t c = t0 + KEEP * nt; c < nch; c += nt) {
      const int n = int(min64(V, dim - c * V));
      float v[V];
      load_chunk<T, VEC>(x, row + c * V, n, v);
#pragma unroll
      for (int e = 0; e < V; ++e)
        if (e < n) s = __fadd_rn(s, __fmul_rn(v[e], v[e]));
    }
    const float rstd = rstd_of(block_sum2(s, 0.0f, sm).x, dim, a.eps);
    const int64_t tb = gate * dim;
    if constexpr (VEC && kPacked<T>) {
      auto emit = [&](int64_t c, const uint4& xr) {
        *reinterpret_cast<uint4*>(out + row + c * V) = fwd_chunk_packed<T>(
            rstd, xr, load_raw(w, c * V), load_raw(shift, tb + c * V), load_raw(scale, tb + c * V));
      };
#pragma unroll
      for (int i = 0; i < KEEP; ++i)
        if (t0 + i * nt < nch) emit(t0 + i * nt, kept[i]);
      for (int64_t c = t0 + KEEP * nt; c < nch; c += nt) emit(c, load_raw(x, row + c * V));
    } else {
      auto emit = [&](int64_t c, int n, const float (&xv)[V]) {
        float wv[V], sh[V], sc[V], o[V];
        load_chunk<T, VEC>(w, c * V, n, wv);
        load_chunk<T, VEC>(shift, tb + c * V, n, sh);
        load_chunk<T, VEC>(scale, tb + c * V, n, sc);
#pragma unroll
        for (int e = 0; e < V; ++e) {
          const float nn = rn<T>(__fmul_rn(wv[e], __fmul_rn(rstd, xv[e])));
          const float f = rn<T>(__fadd_rn(1.0f, sc[e]));
          o[e] = __fadd_rn(rn<T>(__fmul_rn(nn, f)), sh[e]);
        }
        store_chunk<T, VEC>(out, row + c * V, n, o);
      };
#pragma unroll
      for (int i = 0; i < KEEP; ++i)
        if (t0 + i * nt < nch) {
          float xv[V];
          unpack<T>(kept[i], xv);
          emit(t0 + i * nt, V, xv);
        }
      for (int64_t c = t0 + KEEP * nt; c < nch; c += nt) {
        const int n = int(min64(V, dim - c * V));
        float xv[V];
        load_chunk<T, VEC>(x, row + c * V, n, xv);
        emit(c, n, xv);
      }
    }
  }
}

// ---- backward: the per-element formulas ---------------------------------------
// One copy of each, for the two-pass kernels and the one-pass kernel alike:
// the same expressions, so the same bits.

// f = rn(1 + scale): the modulation's factor.
template <class T, int V>
__device__ __forceinline__ void modulation_factor(const float (&sc)[V], float (&f)[V]) {
#pragma unroll
  for (int e = 0; e < V; ++e) f[e] = rn<T>(__fadd_rn(1.0f, sc[e]));
}

// The factors of the chunk of scale at element `at` (its first n elements).
template <class T, bool VEC, int V>
__device__ __forceinline__ void load_factor(const T* scale, int64_t at, int n, float (&f)[V]) {
  float sc[V];
  load_chunk<T, VEC>(scale, at, n, sc);
  modulation_factor<T>(sc, f);
}

// A chunk's terms of the row statistics, its first n elements in order:
// s += x^2, cs += (w * d) * x, with d = g * f.
template <int V>
__device__ __forceinline__ void add_row_terms(int n, const float (&xv)[V], const float (&gv)[V], const float (&wv)[V],
                                              const float (&f)[V], float& s, float& cs) {
#pragma unroll
  for (int e = 0; e < V; ++e)
    if (e < n) {
      s = __fadd_rn(s, __fmul_rn(xv[e], xv[e]));
      cs = __fadd_rn(cs, __fmul_rn(__fmul_rn(wv[e], __fmul_rn(gv[e], f[e])), xv[e]));
    }
}

// dx's second term's factor: rstd^3 * sum(w * d * x) / dim.
__device__ __forceinline__ float dx_factor(float rstd, float cs, int64_t dim) {
  return __fdiv_rn(__fmul_rn(__fmul_rn(__fmul_rn(rstd, rstd), rstd), cs), float(dim));
}

// A chunk of dx: rstd * w * d - x * kq.
template <int V>
__device__ __forceinline__ void dx_chunk(float rstd, float kq, const float (&xv)[V], const float (&gv)[V],
                                         const float (&wv)[V], const float (&f)[V], float (&o)[V]) {
#pragma unroll
  for (int e = 0; e < V; ++e)
    o[e] = __fsub_rn(__fmul_rn(__fmul_rn(rstd, wv[e]), __fmul_rn(gv[e], f[e])), __fmul_rn(xv[e], kq));
}

// One row's terms of the column sums: dshift += g, dscale += g * n,
// dweight += d * x * rstd.
template <class T, int V>
__device__ __forceinline__ void add_col_terms(float rs, const float (&xv)[V], const float (&gv)[V],
                                              const float (&wv)[V], const float (&f)[V], float (&sh)[V],
                                              float (&sc)[V], float (&dw)[V]) {
#pragma unroll
  for (int e = 0; e < V; ++e) {
    const float d = __fmul_rn(gv[e], f[e]);
    sh[e] = __fadd_rn(sh[e], gv[e]);
    sc[e] = __fadd_rn(sc[e], __fmul_rn(gv[e], rn<T>(__fmul_rn(wv[e], __fmul_rn(rs, xv[e])))));
    dw[e] = __fadd_rn(dw[e], __fmul_rn(__fmul_rn(d, xv[e]), rs));
  }
}

// ---- backward: dx per row ---------------------------------------------------

template <class T, bool VEC, int KEEP>
__global__ void __launch_bounds__(bounds_for(KEEP)) bwd_row_kernel(Ptrs a, float* rstd_out) {
  static_assert(VEC || KEEP == 0, "chunks are kept only where they load as 16 bytes");
  if (*a.bad != kNoBadRow) return;
  constexpr int V = VecOf<T>::value;
  __shared__ float2 sm[33];
  const T *x = static_cast<const T*>(a.x), *w = static_cast<const T*>(a.w);
  const T *scale = static_cast<const T*>(a.scale), *g = static_cast<const T*>(a.g);
  T* dx = static_cast<T*>(a.dx);
  const int64_t dim = a.dim, nch = (dim + V - 1) / V, nt = blockDim.x, t0 = threadIdx.x;
  for (int64_t r = blockIdx.x; r < a.rows; r += gridDim.x) {
    const int64_t row = r * dim, tb = a.index[r] * dim;
    uint4 kx[KEEP > 0 ? KEEP : 1], kg[KEEP > 0 ? KEEP : 1];
#pragma unroll
    for (int i = 0; i < KEEP; ++i)
      if (t0 + i * nt < nch) {
        kx[i] = load_raw(x, row + (t0 + i * nt) * V);
        kg[i] = load_raw(g, row + (t0 + i * nt) * V);
      }
    // f(c, n, x, g) on each of the thread's chunks in order: the kept ones from
    // registers, the rest read again.
    auto each_chunk = [&](auto&& f) {
#pragma unroll
      for (int i = 0; i < KEEP; ++i)
        if (t0 + i * nt < nch) {
          float xv[V], gv[V];
          unpack<T>(kx[i], xv);
          unpack<T>(kg[i], gv);
          f(t0 + i * nt, V, xv, gv);
        }
      for (int64_t c = t0 + KEEP * nt; c < nch; c += nt) {
        const int n = int(min64(V, dim - c * V));
        float xv[V], gv[V];
        load_chunk<T, VEC>(x, row + c * V, n, xv);
        load_chunk<T, VEC>(g, row + c * V, n, gv);
        f(c, n, xv, gv);
      }
    };
    // A chunk's w and modulation factor (read from L1 in both passes).
    auto w_and_f = [&](int64_t c, int n, float (&wv)[V], float (&f)[V]) {
      load_chunk<T, VEC>(w, c * V, n, wv);
      load_factor<T, VEC>(scale, tb + c * V, n, f);
    };
    float s = 0.0f, cs = 0.0f;
    auto sums = [&](int64_t c, int n, const float (&xv)[V], const float (&gv)[V]) {
      float wv[V], f[V];
      w_and_f(c, n, wv, f);
      add_row_terms(n, xv, gv, wv, f, s, cs);
    };
    each_chunk(sums);
    const float2 tot = block_sum2(s, cs, sm);
    const float rstd = rstd_of(tot.x, dim, a.eps);
    const float k = dx_factor(rstd, tot.y, dim);
    if (threadIdx.x == 0) rstd_out[r] = rstd;
    auto emit = [&](int64_t c, int n, const float (&xv)[V], const float (&gv)[V]) {
      float wv[V], f[V], o[V];
      w_and_f(c, n, wv, f);
      dx_chunk(rstd, k, xv, gv, wv, f, o);
      store_chunk<T, VEC>(dx, row + c * V, n, o);
    };
    each_chunk(emit);
  }
}

// ---- backward: dshift, dscale, dweight partials --------------------------------

struct Plan {
  const int *seg_start, *tiles, *tile_start, *multi_start, *rows_sorted, *keys_sorted;
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

// ---- backward in one pass ------------------------------------------------------
//
// Where a row's chunks load as 16 bytes and kFusedRows rows of x and g fit in
// shared memory twice, one kernel does both passes' work and reads x and g
// once. A block walks a dweight group's rows in tile order (gate order, then
// a gate's rows in batch order, as the tile kernel does), kFusedRows rows a
// step, the next step's rows copied in (cp.async) while a step is worked:
//   - rows: sub-block j (T = rms_row_threads(dim) threads) does row j as the
//     row kernel's threads do (its chunks' statistics, the fold, dx), reading
//     the copy;
//   - columns: then thread u of the block takes column chunks u, u + R*T, ...
//     and adds the step's rows' terms in row order to its sums: dweight, and
//     the tile's dshift and dscale, in registers.
// The same sums in the same order as the two-pass kernels: the same bits.

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  const unsigned s = unsigned(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Every copy but the last committed group's done (this thread's copies).
__device__ __forceinline__ void cp_async_wait_prior() { asm volatile("cp.async.wait_group 1;\n" ::: "memory"); }

__device__ __forceinline__ int64_t tile_first_pos(const Plan& p, int64_t gates, int64_t t) {
  int64_t lo = 0, hi = gates;  // gate k: the last with tile_start[k] <= t
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (p.tile_start[mid] <= t) lo = mid;
    else hi = mid - 1;
  }
  return p.seg_start[lo] + (t - p.tile_start[lo]) * kRmsSegTileRows;
}

constexpr int kFusedRows = 4;                 // rows a step
constexpr int kFusedMaxThreads = 512;         // a block's threads: up to 128 registers each
constexpr int64_t kFusedSmemMax = 200 << 10;  // two steps' x and g at most (of the H200's 227 KiB a block)

// Shared memory of the one-pass kernel: two steps of kFusedRows rows of x and g.
int64_t fused_smem_bytes(int64_t dim, int vec) { return 2 * 2 * kFusedRows * (dim / vec) * 16; }

// Column chunks a thread of the one-pass kernel sums (0: it does not fit).
int fused_cols_per_thread(int64_t dim, int vec, int threads) {
  const int64_t nch = dim / vec, bt = int64_t(threads) * kFusedRows;
  if (bt > kFusedMaxThreads || fused_smem_bytes(dim, vec) > kFusedSmemMax) return 0;
  const int64_t cpt = (nch + bt - 1) / bt;
  return cpt <= 1 ? 1 : cpt <= 2 ? 2 : 0;
}

template <class T, int CPT>
__global__ void __launch_bounds__(kFusedMaxThreads) bwd_fused_kernel(Ptrs a, Plan p) {
  if (*a.bad != kNoBadRow) return;
  constexpr int V = VecOf<T>::value, R = kFusedRows;
  extern __shared__ uint4 staged[];  // [step & 1][x, g][row j][chunk c]
  __shared__ float2 sm[R][33];
  __shared__ float rs_s[R];
  __shared__ int key_s[R], tile_s[R];
  const T *x = static_cast<const T*>(a.x), *w = static_cast<const T*>(a.w);
  const T *scale = static_cast<const T*>(a.scale), *g = static_cast<const T*>(a.g);
  T* dx = static_cast<T*>(a.dx);
  const int64_t dim = a.dim, nch = dim / V;
  const int nt = int(blockDim.x) / R, j = int(threadIdx.x) / nt, t0 = int(threadIdx.x) - j * nt;
  const int64_t bt = blockDim.x;
  auto buf_x = [&](int64_t step, int row) { return staged + ((step & 1) * 2 * R + row) * nch; };
  auto buf_g = [&](int64_t step, int row) { return staged + ((step & 1) * 2 * R + R + row) * nch; };
  const int64_t ntiles = p.tile_start[a.gates];
  float wc[CPT][V];  // this thread's column chunks' w
#pragma unroll
  for (int m = 0; m < CPT; ++m)
    if (threadIdx.x + m * bt < nch) load_chunk<T, true>(w, (threadIdx.x + m * bt) * V, V, wc[m]);
  for (int64_t grp = blockIdx.x; grp * p.tiles_per_group < ntiles; grp += gridDim.x) {
    const int64_t g0 = grp * p.tiles_per_group, g1 = min64(ntiles, g0 + p.tiles_per_group);
    const int64_t P0 = tile_first_pos(p, a.gates, g0), P1 = g1 < ntiles ? tile_first_pos(p, a.gates, g1) : a.rows;
    const int64_t steps = (P1 - P0 + R - 1) / R;
    // Row j of step st: its chunks of x and g copied by sub-block j's threads,
    // each the chunks it reads in the row phase.
    auto stage = [&](int64_t st) {
      const int64_t pos = P0 + st * R + j;
      if (st < steps && pos < P1) {
        const int64_t row = p.rows_sorted[pos];
        uint4 *sx = buf_x(st, j), *sg = buf_g(st, j);
        for (int64_t c = t0; c < nch; c += nt) {
          cp_async16(sx + c, x + row * dim + c * V);
          cp_async16(sg + c, g + row * dim + c * V);
        }
      }
      cp_async_commit();
    };
    float dw[CPT][V], sh[CPT][V], sc[CPT][V], f[CPT][V];
#pragma unroll
    for (int m = 0; m < CPT; ++m)
#pragma unroll
      for (int e = 0; e < V; ++e) dw[m][e] = sh[m][e] = sc[m][e] = f[m][e] = 0.0f;
    int64_t k = -1, ti = -1;
    auto flush = [&] {
#pragma unroll
      for (int m = 0; m < CPT; ++m)
        if (k >= 0 && threadIdx.x + m * bt < nch) store_tile_sums<T, true>(a, p, k, ti, threadIdx.x + m * bt, V, sh[m], sc[m]);
    };
    stage(0);
    for (int64_t st = 0; st < steps; ++st) {
      stage(st + 1);  // its buffer's last reader finished before the last step's closing barrier
      const int64_t pos = P0 + st * R + j;
      const bool live = pos < P1;
      const int64_t kk = live ? p.keys_sorted[pos] : 0, row = live ? p.rows_sorted[pos] : 0;
      cp_async_wait_prior();
      const uint4 *sx = buf_x(st, j), *sg = buf_g(st, j);
      const int64_t tb = kk * dim;
      auto w_and_f = [&](int64_t c, float (&wv)[V], float (&fv)[V]) {
        load_chunk<T, true>(w, c * V, V, wv);
        load_factor<T, true>(scale, tb + c * V, V, fv);
      };
      float s = 0.0f, cs = 0.0f;
      if (live)
        for (int64_t c = t0; c < nch; c += nt) {
          float xv[V], gv[V], wv[V], fv[V];
          unpack<T>(sx[c], xv);
          unpack<T>(sg[c], gv);
          w_and_f(c, wv, fv);
          add_row_terms(V, xv, gv, wv, fv, s, cs);
        }
      const float2 tot = block_sum2(s, cs, sm[j], t0, nt);
      if (live) {
        const float rstd = rstd_of(tot.x, dim, a.eps);
        const float kq = dx_factor(rstd, tot.y, dim);
        for (int64_t c = t0; c < nch; c += nt) {
          float xv[V], gv[V], wv[V], fv[V], o[V];
          unpack<T>(sx[c], xv);
          unpack<T>(sg[c], gv);
          w_and_f(c, wv, fv);
          dx_chunk(rstd, kq, xv, gv, wv, fv, o);
          store_chunk<T, true>(dx, row * dim + c * V, V, o);
        }
        if (t0 == 0) {
          rs_s[j] = rstd;
          key_s[j] = int(kk);
          tile_s[j] = int((pos - p.seg_start[kk]) / kRmsSegTileRows);
        }
      }
      __syncthreads();  // the step's rows (copies, rstd, tile) to every thread
      const int nr = int(min64(R, P1 - (P0 + st * R)));
      for (int q = 0; q < nr; ++q) {
        const int64_t kq2 = key_s[q], tq = tile_s[q];
        if (kq2 != k || tq != ti) {  // a new tile: the last one's sums out, zeros in
          flush();
          k = kq2;
          ti = tq;
#pragma unroll
          for (int m = 0; m < CPT; ++m) {
#pragma unroll
            for (int e = 0; e < V; ++e) sh[m][e] = sc[m][e] = 0.0f;
            if (threadIdx.x + m * bt < nch) load_factor<T, true>(scale, k * dim + (threadIdx.x + m * bt) * V, V, f[m]);
          }
        }
        const float rs = rs_s[q];
        const uint4 *qx = buf_x(st, q), *qg = buf_g(st, q);
#pragma unroll
        for (int m = 0; m < CPT; ++m)
          if (threadIdx.x + m * bt < nch) {
            float xv[V], gv[V];
            unpack<T>(qx[threadIdx.x + m * bt], xv);
            unpack<T>(qg[threadIdx.x + m * bt], gv);
            add_col_terms<T>(rs, xv, gv, wc[m], f[m], sh[m], sc[m], dw[m]);
          }
      }
      __syncthreads();  // the step's buffer free for the copy two steps on
    }
    flush();
#pragma unroll
    for (int m = 0; m < CPT; ++m)
      if (threadIdx.x + m * bt < nch)
#pragma unroll
        for (int e = 0; e < V; ++e) p.dw_part[grp * dim + (threadIdx.x + m * bt) * V + e] = dw[m][e];
  }
}

// The partials folded in order (kFoldAhead loads issued at once, then added
// in order): gates with several tiles, gates without rows
// (zeros), and dweight (the last row of the grid).
template <class T>
__global__ void bwd_fold_kernel(Ptrs a, Plan p) {
  if (*a.bad != kNoBadRow) return;
  const int64_t dim = a.dim, gates = a.gates, total = (gates + 1) * dim;
  const int64_t ntiles = p.tile_start[gates];
  const int64_t groups = (ntiles + p.tiles_per_group - 1) / p.tiles_per_group;
  T *dshift = static_cast<T*>(a.dshift), *dscale = static_cast<T*>(a.dscale), *dweight = static_cast<T*>(a.dweight);
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t k = e / dim, j = e - k * dim;
    if (k == gates) {
      float acc = 0.0f;
      for (int64_t b0 = 0; b0 < groups; b0 += kFoldAhead) {
        float v[kFoldAhead];
#pragma unroll
        for (int q = 0; q < kFoldAhead; ++q)
          if (b0 + q < groups) v[q] = p.dw_part[(b0 + q) * dim + j];
#pragma unroll
        for (int q = 0; q < kFoldAhead; ++q)
          if (b0 + q < groups) acc = __fadd_rn(acc, v[q]);
      }
      dweight[j] = round_to<T>(acc);
      continue;
    }
    const int nt = p.tiles[k];
    if (nt == 1) continue;  // written by its tile
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
    dshift[e] = round_to<T>(sh);
    dscale[e] = round_to<T>(sc);
  }
}

// ---- row statistics alone (rmsnorm_modulate_cuda_rstd.h) ---------------------
// rstd as the row kernels compute it: the same chunks, partials and tree.
template <class T, bool VEC>
__global__ void __launch_bounds__(1024) rstd_kernel(Ptrs a, float* rstd_out) {
  constexpr int V = VecOf<T>::value;
  __shared__ float2 sm[33];
  const T* x = static_cast<const T*>(a.x);
  const int64_t dim = a.dim, nch = (dim + V - 1) / V, nt = blockDim.x, t0 = threadIdx.x;
  for (int64_t r = blockIdx.x; r < a.rows; r += gridDim.x) {
    float s = 0.0f;
    for (int64_t c = t0; c < nch; c += nt) {
      const int n = int(min64(V, dim - c * V));
      float v[V];
      load_chunk<T, VEC>(x, r * dim + c * V, n, v);
#pragma unroll
      for (int e = 0; e < V; ++e)
        if (e < n) s = __fadd_rn(s, __fmul_rn(v[e], v[e]));
    }
    const float rstd = rstd_of(block_sum2(s, 0.0f, sm).x, dim, a.eps);
    if (t0 == 0) rstd_out[r] = rstd;
  }
}

// ---- host side --------------------------------------------------------------

Status cuda_error(const char* who, cudaError_t e) {
  return Status::error(ErrorKind::implementation, std::string(who) + ": CUDA error: " + cudaGetErrorString(e));
}

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// Scratch carved from one allocation, each piece 256-byte aligned.
struct Carve {
  size_t bytes = 0;
  char* base = nullptr;
  template <class U> U* take(size_t n) {
    const size_t at = (bytes + 255) / 256 * 256;
    bytes = at + n * sizeof(U);
    return base ? reinterpret_cast<U*>(base + at) : nullptr;
  }
};

struct Layout {
  int *count, *tiles, *multi, *seg_start, *tile_start, *multi_start, *keys, *vals, *keys_sorted, *rows_sorted;
  float *rstd, *seg_part, *dw_part;
  void* cub_tmp;
  size_t cub_bytes;
};

int64_t slots_bound(int64_t rows, int64_t gates) {
  // A gate with two or more tiles has more than kRmsSegTileRows rows, so its
  // tiles are at most twice its rows over the tile.
  const int64_t b = 2 * ((rows + kRmsSegTileRows - 1) / kRmsSegTileRows);
  const int64_t m = rms_max_tiles(rows, gates);
  return b < m ? b : m;
}

Layout carve(Carve& cv, int64_t rows, int64_t dim, int64_t gates, size_t cub_bytes) {
  Layout l{};
  const size_t G = size_t(gates + 1), R = size_t(rows);
  const int64_t groups = (rms_max_tiles(rows, gates) + rms_tiles_per_group(rows, gates) - 1) /
                         rms_tiles_per_group(rows, gates);
  l.count = cv.take<int>(G);
  l.tiles = cv.take<int>(G);
  l.multi = cv.take<int>(G);
  l.seg_start = cv.take<int>(G);
  l.tile_start = cv.take<int>(G);
  l.multi_start = cv.take<int>(G);
  l.keys = cv.take<int>(R);
  l.vals = cv.take<int>(R);
  l.keys_sorted = cv.take<int>(R);
  l.rows_sorted = cv.take<int>(R);
  l.rstd = cv.take<float>(R);
  l.seg_part = cv.take<float>(size_t(2 * slots_bound(rows, gates) * dim));
  l.dw_part = cv.take<float>(size_t(groups * dim));
  l.cub_tmp = cv.take<char>(cub_bytes);
  l.cub_bytes = cub_bytes;
  return l;
}

size_t cub_bytes_for(int64_t rows, int64_t gates, int end_bit) {
  size_t sort = 0, scan = 0;
  cub::DeviceRadixSort::SortPairs(nullptr, sort, (const int*)nullptr, (int*)nullptr, (const int*)nullptr,
                                  (int*)nullptr, rows, 0, end_bit);
  cub::DeviceScan::ExclusiveSum(nullptr, scan, (const int*)nullptr, (int*)nullptr, gates + 1);
  return sort > scan ? sort : scan;
}

int key_bits(int64_t gates) {
  int b = 1;
  while (b < 31 && (int64_t(1) << b) < gates) ++b;
  return b;
}

// The row kernels' three paths: 16-byte loads with the row kept in registers
// (up to 256 threads a row: dim up to 2,048 chunks), 16-byte loads that read
// the row again for the second pass (wider rows), element loads (any dim,
// any alignment).
enum class RowPath { kept, vector, element };
RowPath row_path(bool vec, int threads) {
  return !vec ? RowPath::element : threads <= bounds_for(kRmsChunksPerThread) ? RowPath::kept : RowPath::vector;
}

template <class T>
void launch_fwd(const Ptrs& a, bool vec, cudaStream_t s) {
  const int threads = rms_row_threads(a.dim, VecOf<T>::value);
  const int blocks = int(a.rows < kMaxGridRows ? a.rows : kMaxGridRows);
  switch (row_path(vec, threads)) {
    case RowPath::kept: fwd_kernel<T, true, kRmsChunksPerThread><<<blocks, threads, 0, s>>>(a); break;
    case RowPath::vector: fwd_kernel<T, true, 0><<<blocks, threads, 0, s>>>(a); break;
    case RowPath::element: fwd_kernel<T, false, 0><<<blocks, threads, 0, s>>>(a); break;
  }
}

// The one-pass kernel: a block a dweight group, as many resident as the
// shared memory allows.
template <class T, int CPT>
void launch_fused(const Ptrs& a, const Plan& p, int threads, int64_t groups, cudaStream_t s) {
  const int64_t smem = fused_smem_bytes(a.dim, VecOf<T>::value);
  static std::atomic<int64_t> granted{0};  // the kernel's dynamic shared memory limit, raised once as needed
  if (smem > granted.load()) {
    cudaFuncSetAttribute(bwd_fused_kernel<T, CPT>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kFusedSmemMax));
    granted.store(kFusedSmemMax);
  }
  const unsigned grid = unsigned(groups < 65535 ? groups : 65535);
  bwd_fused_kernel<T, CPT><<<grid, threads * kFusedRows, size_t(smem), s>>>(a, p);
}

template <class T>
void launch_two_pass(const Ptrs& a, const Plan& p, bool vec, int64_t nch, int64_t groups, cudaStream_t s);

std::atomic<RmsBwdKernels> bwd_kernels{kRmsBwdKernelsDefault};

template <class T>
void launch_bwd(const Ptrs& a, const Layout& l, bool vec, cudaStream_t s) {
  const int threads = rms_row_threads(a.dim, VecOf<T>::value);
  Plan p{l.seg_start, l.tiles, l.tile_start, l.multi_start, l.rows_sorted, l.keys_sorted, l.rstd, l.seg_part, l.dw_part,
         rms_tiles_per_group(a.rows, a.gates)};
  const int64_t nch = (a.dim + VecOf<T>::value - 1) / VecOf<T>::value;
  const int64_t groups = (rms_max_tiles(a.rows, a.gates) + p.tiles_per_group - 1) / p.tiles_per_group;
  const int cpt = vec ? fused_cols_per_thread(a.dim, VecOf<T>::value, threads) : 0;
  if (cpt > 0 && bwd_kernels.load() == RmsBwdKernels::one_pass) {
    if (a.rows > 0) {
      if (cpt == 1) launch_fused<T, 1>(a, p, threads, groups, s);
      else launch_fused<T, 2>(a, p, threads, groups, s);
    }
  } else {
    launch_two_pass<T>(a, p, vec, nch, groups, s);
  }
  const int64_t total = (a.gates + 1) * a.dim;
  const int64_t fb = (total + 255) / 256;
  bwd_fold_kernel<T><<<unsigned(fb < 4096 ? fb : 4096), 256, 0, s>>>(a, p);
}

// The row kernel (dx, rstd), then the tile kernel (dshift, dscale and dweight
// partials), reading x and g again.
template <class T>
void launch_two_pass(const Ptrs& a, const Plan& p, bool vec, int64_t nch, int64_t groups, cudaStream_t s) {
  const int threads = rms_row_threads(a.dim, VecOf<T>::value);
  if (a.rows > 0) {
    const int blocks = int(a.rows < kMaxGridRows ? a.rows : kMaxGridRows);
    switch (row_path(vec, threads)) {
      case RowPath::kept: bwd_row_kernel<T, true, kRmsChunksPerThread><<<blocks, threads, 0, s>>>(a, const_cast<float*>(p.rstd)); break;
      case RowPath::vector: bwd_row_kernel<T, true, 0><<<blocks, threads, 0, s>>>(a, const_cast<float*>(p.rstd)); break;
      case RowPath::element: bwd_row_kernel<T, false, 0><<<blocks, threads, 0, s>>>(a, const_cast<float*>(p.rstd)); break;
    }
  }
  if (groups > 0) {
    const dim3 grid(unsigned((nch + kTileThreads - 1) / kTileThreads), unsigned(groups < 65535 ? groups : 65535));
    if (vec) bwd_tile_kernel<T, true><<<grid, kTileThreads, 0, s>>>(a, p);
    else bwd_tile_kernel<T, false><<<grid, kTileThreads, 0, s>>>(a, p);
  }
}

Ptrs ptrs_of(const OpCall& c, const unsigned long long* bad) {
  const OpSchema& op = *c.op;
  Ptrs a;
  auto in = [&](const char* n) { return c.inputs[size_t(op.input_index(n))].data; };
  auto out = [&](const char* n) { return c.outputs[size_t(op.output_index(n))].data; };
  a.x = in("x");
  a.w = in("w");
  a.shift = in("shift");
  a.scale = in("scale");
  a.g = in("grad_out");
  a.index = static_cast<const int64_t*>(in("index"));
  a.out = out("out");
  a.dx = out("dx");
  a.dweight = out("dweight");
  a.dshift = out("dshift");
  a.dscale = out("dscale");
  a.rows = c.p.rows;
  a.dim = c.p.dim;
  a.gates = c.p.gates;
  a.eps = float(c.scalars[size_t(op.scalar_index("eps"))]);
  a.bad = bad;
  return a;
}

// Every tensor the kernels read or write at 16 bytes, and rows that keep it.
bool vector_ok(const Ptrs& a, int elem_bytes) {
  if (a.dim % rms_vec(elem_bytes) != 0) return false;
  for (const void* p : {a.x, a.w, a.shift, a.scale, a.g, static_cast<const void*>(a.out),
                        static_cast<const void*>(a.dx), static_cast<const void*>(a.dshift),
                        static_cast<const void*>(a.dscale)})
    if (p && !aligned16(p)) return false;
  return true;
}

// scratch: rmsnorm_modulate_cuda_bwd_scratch_bytes of the caller's, or null:
// the stream's memory pool, given back before the call returns.
template <class T>
Status run_typed(const OpCall& c, unsigned long long* bad, void* scratch) {
  const char* who = c.pass == Pass::forward ? "rmsnorm_modulate_fwd" : "rmsnorm_modulate_bwd";
  cudaStream_t s = static_cast<cudaStream_t>(c.p.stream);
  const Ptrs a = ptrs_of(c, bad);
  const bool vec = vector_ok(a, int(sizeof(T)));
  cudaError_t e = cudaMemsetAsync(bad, 0xff, sizeof *bad, s);
  if (e != cudaSuccess) return cuda_error(who, e);
  const unsigned check_blocks = unsigned(a.rows > 0 ? (a.rows + 255) / 256 < 4096 ? (a.rows + 255) / 256 : 4096 : 1);
  if (c.pass == Pass::forward) {
    if (a.rows == 0 || a.dim == 0) return Status::success();
    check_index_kernel<<<check_blocks, 256, 0, s>>>(a.index, a.rows, a.gates, bad, nullptr, nullptr, nullptr);
    launch_fwd<T>(a, vec, s);
    e = cudaGetLastError();
    return e == cudaSuccess ? Status::success() : cuda_error(who, e);
  }
  if (a.dim == 0) return Status::success();
  const int bits = key_bits(a.gates);
  const size_t cub_bytes = cub_bytes_for(a.rows, a.gates, bits);
  Carve cv;
  carve(cv, a.rows, a.dim, a.gates, cub_bytes);
  if (scratch) cv.base = static_cast<char*>(scratch);
  else if ((e = cudaMallocAsync(reinterpret_cast<void**>(&cv.base), cv.bytes, s)) != cudaSuccess)
    return cuda_error(who, e);
  cv.bytes = 0;
  const Layout l = carve(cv, a.rows, a.dim, a.gates, cub_bytes);
  const size_t G = size_t(a.gates + 1);
  cudaMemsetAsync(l.count, 0, G * sizeof(int), s);
  if (a.rows > 0) {
    check_index_kernel<<<check_blocks, 256, 0, s>>>(a.index, a.rows, a.gates, bad, l.count, l.keys, l.vals);
    size_t tb = l.cub_bytes;
    cub::DeviceRadixSort::SortPairs(l.cub_tmp, tb, l.keys, l.keys_sorted, l.vals, l.rows_sorted, a.rows, 0, bits, s);
  }
  const unsigned gb = unsigned((G + 255) / 256 < 4096 ? (G + 255) / 256 : 4096);
  tile_counts_kernel<<<gb, 256, 0, s>>>(l.count, a.gates, l.tiles, l.multi);
  size_t tb = l.cub_bytes;
  cub::DeviceScan::ExclusiveSum(l.cub_tmp, tb, l.count, l.seg_start, int64_t(G), s);
  cub::DeviceScan::ExclusiveSum(l.cub_tmp, tb, l.tiles, l.tile_start, int64_t(G), s);
  cub::DeviceScan::ExclusiveSum(l.cub_tmp, tb, l.multi, l.multi_start, int64_t(G), s);
  launch_bwd<T>(a, l, vec, s);
  e = cudaGetLastError();
  const cudaError_t f = scratch ? cudaSuccess : cudaFreeAsync(cv.base, s);
  if (e == cudaSuccess) e = f;
  return e == cudaSuccess ? Status::success() : cuda_error(who, e);
}

}  // namespace

void rmsnorm_modulate_cuda_set_bwd_kernels(RmsBwdKernels k) { bwd_kernels.store(k); }

int64_t rmsnorm_modulate_cuda_bwd_scratch_bytes(int64_t rows, int64_t dim, int64_t gates) {
  Carve cv;
  carve(cv, rows, dim, gates, cub_bytes_for(rows, gates, key_bits(gates)));
  return int64_t(cv.bytes);
}

Status rmsnorm_modulate_cuda_run(const OpCall& c, unsigned long long* bad_row, void* scratch) {
  if (c.p.rows > INT32_MAX || c.p.gates > INT32_MAX)
    return Status::error(ErrorKind::size_overflow,
                         std::string(c.pass == Pass::forward ? "rmsnorm_modulate_fwd" : "rmsnorm_modulate_bwd") +
                             ": rows and gates must each be below 2^31 for the cuda kernels");
  switch (DType(c.p.dtype)) {
    case DType::f32: return run_typed<float>(c, bad_row, scratch);
    case DType::f16: return run_typed<f16_t>(c, bad_row, scratch);
    default: return run_typed<bf16_t>(c, bad_row, scratch);
  }
}

Status rmsnorm_modulate_cuda_rstd(const OpCall& c, float* rstd) {
  const Ptrs a = ptrs_of(c, nullptr);
  if (a.rows == 0 || a.dim == 0) return Status::success();
  const auto s = static_cast<cudaStream_t>(c.p.stream);
  const int blocks = int(a.rows < kMaxGridRows ? a.rows : kMaxGridRows);
  auto launch = [&](auto tag) {
    using T = decltype(tag);
    constexpr int V = VecOf<T>::value;
    const int threads = rms_row_threads(a.dim, V);
    if (a.dim % V == 0 && aligned16(a.x)) rstd_kernel<T, true><<<blocks, threads, 0, s>>>(a, rstd);
    else rstd_kernel<T, false><<<blocks, threads, 0, s>>>(a, rstd);
  };
  switch (DType(c.p.dtype)) {
    case DType::f32: launch(float{}); break;
    case DType::f16: launch(f16_t{}); break;
    default: launch(bf16_t{}); break;
  }
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? Status::success() : cuda_error("rmsnorm_modulate_rstd", e);
}

}  // namespace gatecheck
