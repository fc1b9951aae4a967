// rmsnorm_modulate's CUDA kernels. The orders of every reduction are
// rmsnorm_modulate_order.h's; the host twin (kernels/host) follows them.
//
// Forward: one block per row (grid-stride over rows); the order's T partials
// of a row (rms_row_threads(dim)) are held by T / 4 threads, four a thread
// (Lanes); each partial sums the squares of its chunks, then the block folds
// them by the order's trees. Backward in one pass where a row's chunks load
// as 16 bytes and fit (bwd_onepass_kernel: a block of T threads walks a
// dweight group's rows in the tile order, each thread the same columns for
// the row statistics, dx and its column sums in registers), else two passes:
// the row kernel for dx (sum x^2 and sum w*d*x together) stores rstd; the
// tile kernel sums dshift, dscale (per tile) and dweight (per group of tiles)
// with one thread per chunk of columns, reading x and g again. Both take an
// index plan (the rows sorted by gate, stable, cut into tiles of
// kRmsSegTileRows), and a last kernel folds the partials in order. No float
// atomics: every bit is fixed by the call.
// Vector loads (16 bytes) only where every tensor is 16-byte aligned and
// dim is a multiple of the chunk; otherwise the element path, same order (the
// forward moving chunks as shifted aligned blocks, load_row_chunk). With
// vector loads of 16-bit types the forward rounds pairs of elements in packed
// instructions (rmsnorm_modulate_cuda_pair.cuh), the same bits.
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
#include "rmsnorm_modulate_cuda_unaligned.cuh"

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

// A 16-byte chunk's values as floats: 16-bit types a word (two values) at a
// time, one instruction a value.
template <class T>
__device__ __forceinline__ void unpack(const uint4& u, float (&v)[VecOf<T>::value]) {
  if constexpr (kPacked<T>) {
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      v[2 * q] = Pair<T>::lo(word(u, q));
      v[2 * q + 1] = Pair<T>::hi(word(u, q));
    }
  } else {
    v[0] = __uint_as_float(u.x);
    v[1] = __uint_as_float(u.y);
    v[2] = __uint_as_float(u.z);
    v[3] = __uint_as_float(u.w);
  }
}

// round_to<T> of a chunk's V values, packed: 16-bit types a pair per cvt,
// with round_to's canonical NaN wherever a value is NaN.
template <class T>
__device__ __forceinline__ uint4 round_chunk(const float (&v)[VecOf<T>::value]) {
  if constexpr (kPacked<T>) {
    uint32_t r[4];
    bool nan = false;
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      r[q] = Pair<T>::rn(v[2 * q], v[2 * q + 1]);
      nan |= (v[2 * q] != v[2 * q]) | (v[2 * q + 1] != v[2 * q + 1]);
    }
    if (nan) {
#pragma unroll
      for (int q = 0; q < 4; ++q)
        r[q] = uint32_t(round_to<T>(v[2 * q]).bits) | uint32_t(round_to<T>(v[2 * q + 1]).bits) << 16;
    }
    return make_uint4(r[0], r[1], r[2], r[3]);
  } else {
    return make_uint4(__float_as_uint(round_to<T>(v[0])), __float_as_uint(round_to<T>(v[1])),
                      __float_as_uint(round_to<T>(v[2])), __float_as_uint(round_to<T>(v[3])));
  }
}

template <class T, bool VEC>
__device__ __forceinline__ void load_chunk(const T* p, int64_t j0, int n, float (&v)[VecOf<T>::value]) {
  constexpr int V = VecOf<T>::value;
  if constexpr (VEC) {
    unpack<T>(__ldg(reinterpret_cast<const uint4*>(p + j0)), v);
  } else {
#pragma unroll
    for (int e = 0; e < V; ++e) v[e] = e < n ? to_float(p[j0 + e]) : 0.0f;
  }
}

// The forward's load of a chunk of a tensor of `count` elements (zeros past
// n): one 16-byte load, or the unaligned path's shifted blocks
// (rmsnorm_modulate_cuda_unaligned.cuh). The backward's element path keeps
// element loads (load_chunk): the shifted ones took its kernels' registers
// from 48 to 72 (row) and 128 to 172 (tile), and the backward at bf16 32768 x
// 5001 took 2098 us with them against 1356 without on the H200. The forward
// took 734 us with them (880 with element loads, measured on an older commit).
template <class T, bool VEC>
__device__ __forceinline__ void load_row_chunk(const T* p, int64_t count, int64_t j0, int n,
                                               float (&v)[VecOf<T>::value]) {
  constexpr int V = VecOf<T>::value;
  if constexpr (VEC) {
    load_chunk<T, true>(p, j0, n, v);
  } else {
    unpack<T>(load_unaligned(p, count, j0, n), v);
#pragma unroll
    for (int e = 0; e < V; ++e)
      if (e >= n) v[e] = 0.0f;
  }
}

template <class T, bool VEC>
__device__ __forceinline__ void store_chunk(T* p, int64_t j0, int n, const float (&v)[VecOf<T>::value]) {
  constexpr int V = VecOf<T>::value;
  if constexpr (VEC) {
    *reinterpret_cast<uint4*>(p + j0) = round_chunk<T>(v);
  } else {
#pragma unroll
    for (int e = 0; e < V; ++e)
      if (e < n) p[j0 + e] = round_to<T>(v[e]);
  }
}

// A chunk of a row written by a warp's lanes together (their chunks
// consecutive): 16-byte stores, or the unaligned path's.
template <class T, bool VEC>
__device__ __forceinline__ void put_chunk(T* p, int64_t j0, int n, const float (&v)[VecOf<T>::value]) {
  if constexpr (VEC) store_chunk<T, true>(p, j0, n, v);
  else store_unaligned<T>(p, j0, n, round_chunk<T>(v));
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

__device__ __forceinline__ float rstd_of(float ss, int64_t dim, float eps) {
  return __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(__fdiv_rn(ss, float(dim)), eps)));
}

__device__ __forceinline__ int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

// ---- index check and plan ---------------------------------------------------

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

// ---- the row kernels ---------------------------------------------------------
//
// Thread t of a row's T = rms_row_threads(dim) threads owns chunks t, t + T,
// ... (its partial of the order). T is chosen so that a thread owns about
// kRmsChunksPerThread chunks; where every tensor takes 16-byte loads, the
// first KEEP of them stay in registers, as loaded, from the reduction to the
// second pass, so that x (and g) are read from memory once. Every load of a
// row is issued before its reduction, so a block waits on one memory latency.

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

// The order's partials as a block's threads hold them: each of the block's
// P warps plays up to M of the order's T / 32 warps, so a row takes fewer
// threads and a thread more chunks (more rows in flight an SM) with the same
// sums. Warp w plays order warps w, w + P, w + 2P, ... (balanced: they differ
// by one at most); thread (w, l) holds partials (w + j * P) * 32 + l, j < M,
// and partial p's chunks are p, p + T, ... Order warps past T / 32 are none.
template <int M>
struct Lanes {
  int T, nvw, w, l, P;
  int64_t nch;
  __device__ Lanes(int64_t dim, int vec)
      : T(rms_row_threads(dim, vec)), nvw(T / 32), w(int(threadIdx.x >> 5)), l(int(threadIdx.x & 31)),
        P(int(blockDim.x >> 5)), nch((dim + vec - 1) / vec) {}
  __device__ int vw(int j) const { return w + j * P; }
  // Chunk i of partial j; partial j's chunks end before end(j) (0 for none).
  __device__ int64_t chunk(int j, int64_t i) const { return int64_t(vw(j)) * 32 + l + i * T; }
  __device__ int64_t end(int j) const { return vw(j) < nvw ? nch : 0; }
  // f(c, n) on partial j's chunks from its i0-th on, n the chunk's elements
  // (dim's last chunk may be short). EVERY_LANE: every lane of a warp takes
  // each turn, n = 0 where it has no chunk, as store_unaligned needs.
  template <bool EVERY_LANE, class F>
  __device__ __forceinline__ void each(int j, int i0, int64_t dim, int vec, F&& f) const {
    if constexpr (EVERY_LANE) {
      for (int64_t c0 = chunk(j, i0) - l; c0 < end(j); c0 += T) {
        const int64_t c = c0 + l;
        f(c, c < end(j) ? int(min64(vec, dim - c * vec)) : 0);
      }
    } else {
      for (int64_t c = chunk(j, i0); c < end(j); c += T) f(c, int(min64(vec, dim - c * vec)));
    }
  }
};

// The partials of each of a row's two statistics folded by the order's
// trees; every thread gets both sums. Every thread of the block calls it.
template <int M>
__device__ __forceinline__ float2 fold_lanes(const Lanes<M>& ln, const float (&a)[M], const float (&b)[M],
                                             float2* sm) {
#pragma unroll
  for (int j = 0; j < M; ++j) {
    const float x = warp_tree(a[j]), y = warp_tree(b[j]);
    if (ln.l == 0 && ln.vw(j) < ln.nvw) sm[ln.vw(j)] = make_float2(x, y);
  }
  __syncthreads();
  if (ln.w == 0) {
    const float2 v = ln.l < ln.nvw ? sm[ln.l] : make_float2(0.0f, 0.0f);
    const float x = warp_tree(v.x), y = warp_tree(v.y);
    if (ln.l == 0) sm[32] = make_float2(x, y);
  }
  __syncthreads();
  return sm[32];
}

// Order warps a warp of the row kernels plays: about three (about six
// 16-byte chunks a thread, as many rows in flight as registers allow).
constexpr int kLanesPerThread = 3;
constexpr int kRowKernelMaxThreads = (32 + kLanesPerThread - 1) / kLanesPerThread * 32;  // T = 1,024: 352
int row_kernel_threads(int64_t dim, int vec) {
  const int nvw = rms_row_threads(dim, vec) / 32;
  return (nvw + kLanesPerThread - 1) / kLanesPerThread * 32;
}

// Launch bounds of 256 threads where the row takes at most that many, for
// the registers they give (64 at 16 bits: eight blocks of 128 threads an SM
// at 5376 columns; the forward's speed follows its rows in flight, and a
// bound of 352 gave 66 registers, seven blocks, 214.6 us against 195.4 at
// bf16 32768 x 5376 on the H200); kRowKernelMaxThreads for wider rows.
constexpr int kRowKernelNarrowThreads = 256;
template <class T, bool VEC, int KEEP, int M, int MAXT>
__global__ void __launch_bounds__(MAXT) fwd_kernel(Ptrs a) {
  static_assert(VEC || KEEP == 0, "chunks are kept only where they load as 16 bytes");
  if (*a.bad != kNoBadRow) return;
  constexpr int V = VecOf<T>::value;
  __shared__ float2 sm[33];
  const T *x = static_cast<const T*>(a.x), *w = static_cast<const T*>(a.w);
  const T *shift = static_cast<const T*>(a.shift), *scale = static_cast<const T*>(a.scale);
  T* out = static_cast<T*>(a.out);
  const int64_t dim = a.dim, nx = a.rows * dim, nt = a.gates * dim;  // nx, nt: the element path's bounds
  const Lanes<M> ln(dim, V);
  for (int64_t r = blockIdx.x; r < a.rows; r += gridDim.x) {
    const int64_t row = r * dim;
    const int64_t gate = a.index[r];  // needed after the reduction: loaded with x
    uint4 kept[M][KEEP > 0 ? KEEP : 1];
#pragma unroll
    for (int j = 0; j < M; ++j)
#pragma unroll
      for (int i = 0; i < KEEP; ++i)
        if (ln.chunk(j, i) < ln.end(j)) kept[j][i] = load_once(x, row + ln.chunk(j, i) * V);
    float s[M], zero[M];
#pragma unroll
    for (int j = 0; j < M; ++j) {
      s[j] = zero[j] = 0.0f;
#pragma unroll
      for (int i = 0; i < KEEP; ++i)
        if (ln.chunk(j, i) < ln.end(j)) {
          float v[V];
          unpack<T>(kept[j][i], v);
#pragma unroll
          for (int e = 0; e < V; ++e) s[j] = __fadd_rn(s[j], __fmul_rn(v[e], v[e]));
        }
      for (int64_t c = ln.chunk(j, KEEP); c < ln.end(j); c += ln.T) {
        const int n = int(min64(V, dim - c * V));
        float v[V];
        load_row_chunk<T, VEC>(x, nx, row + c * V, n, v);
#pragma unroll
        for (int e = 0; e < V; ++e)
          if (e < n) s[j] = __fadd_rn(s[j], __fmul_rn(v[e], v[e]));
      }
    }
    const float rstd = rstd_of(fold_lanes<M>(ln, s, zero, sm).x, dim, a.eps);
    const int64_t tb = gate * dim;
    if constexpr (VEC && kPacked<T>) {
      auto emit = [&](int64_t c, const uint4& xr) {
        *reinterpret_cast<uint4*>(out + row + c * V) = fwd_chunk_packed<T>(
            rstd, xr, load_raw(w, c * V), load_raw(shift, tb + c * V), load_raw(scale, tb + c * V));
      };
#pragma unroll
      for (int j = 0; j < M; ++j) {
#pragma unroll
        for (int i = 0; i < KEEP; ++i)
          if (ln.chunk(j, i) < ln.end(j)) emit(ln.chunk(j, i), kept[j][i]);
        for (int64_t c = ln.chunk(j, KEEP); c < ln.end(j); c += ln.T) emit(c, load_raw(x, row + c * V));
      }
    } else {
      auto emit = [&](int64_t c, int n, const float (&xv)[V]) {
        float wv[V], sh[V], sc[V], o[V];
        load_row_chunk<T, VEC>(w, dim, c * V, n, wv);
        load_row_chunk<T, VEC>(shift, nt, tb + c * V, n, sh);
        load_row_chunk<T, VEC>(scale, nt, tb + c * V, n, sc);
#pragma unroll
        for (int e = 0; e < V; ++e) {
          const float nn = rn<T>(__fmul_rn(wv[e], __fmul_rn(rstd, xv[e])));
          const float f = rn<T>(__fadd_rn(1.0f, sc[e]));
          o[e] = __fadd_rn(rn<T>(__fmul_rn(nn, f)), sh[e]);
        }
        put_chunk<T, VEC>(out, row + c * V, n, o);
      };
#pragma unroll
      for (int j = 0; j < M; ++j) {
#pragma unroll
        for (int i = 0; i < KEEP; ++i)
          if (ln.chunk(j, i) < ln.end(j)) {
            float xv[V];
            unpack<T>(kept[j][i], xv);
            emit(ln.chunk(j, i), V, xv);
          }
        ln.template each<!VEC>(j, KEEP, dim, V, [&](int64_t c, int n) {
          float xv[V];
          load_row_chunk<T, VEC>(x, nx, row + c * V, n, xv);
          emit(c, n, xv);
        });
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

// The factors of a 16-byte chunk of scale, as T (they are exact in T).
template <class T>
__device__ __forceinline__ uint4 factor_raw(const uint4& scr) {
  constexpr int V = VecOf<T>::value;
  float sc[V], f[V];
  unpack<T>(scr, sc);
  modulation_factor<T>(sc, f);
  return round_chunk<T>(f);
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
  float nv[V];  // n = rn(w * (rs * x)): 16-bit types a pair per cvt (round_inner's bits)
  if constexpr (kPacked<T>) {
#pragma unroll
    for (int e = 0; e < V; e += 2) {
      const uint32_t r = Pair<T>::rn(__fmul_rn(wv[e], __fmul_rn(rs, xv[e])), __fmul_rn(wv[e + 1], __fmul_rn(rs, xv[e + 1])));
      nv[e] = Pair<T>::lo(r);
      nv[e + 1] = Pair<T>::hi(r);
    }
  } else {
#pragma unroll
    for (int e = 0; e < V; ++e) nv[e] = rn<T>(__fmul_rn(wv[e], __fmul_rn(rs, xv[e])));
  }
#pragma unroll
  for (int e = 0; e < V; ++e) {
    const float d = __fmul_rn(gv[e], f[e]);
    sh[e] = __fadd_rn(sh[e], gv[e]);
    sc[e] = __fadd_rn(sc[e], __fmul_rn(gv[e], nv[e]));
    dw[e] = __fadd_rn(dw[e], __fmul_rn(__fmul_rn(d, xv[e]), rs));
  }
}

// ---- backward: dx per row ---------------------------------------------------

template <class T, bool VEC, int KEEP, int M, int MAXT>  // MAXT: as fwd_kernel's
__global__ void __launch_bounds__(MAXT) bwd_row_kernel(Ptrs a, float* rstd_out) {
  static_assert(VEC || KEEP == 0, "chunks are kept only where they load as 16 bytes");
  if (*a.bad != kNoBadRow) return;
  constexpr int V = VecOf<T>::value;
  __shared__ float2 sm[33];
  const T *x = static_cast<const T*>(a.x), *w = static_cast<const T*>(a.w);
  const T *scale = static_cast<const T*>(a.scale), *g = static_cast<const T*>(a.g);
  T* dx = static_cast<T*>(a.dx);
  const int64_t dim = a.dim;
  const Lanes<M> ln(dim, V);
  for (int64_t r = blockIdx.x; r < a.rows; r += gridDim.x) {
    const int64_t row = r * dim, tb = a.index[r] * dim;
    uint4 kx[M][KEEP > 0 ? KEEP : 1], kg[M][KEEP > 0 ? KEEP : 1];
#pragma unroll
    for (int j = 0; j < M; ++j)
#pragma unroll
      for (int i = 0; i < KEEP; ++i)
        if (ln.chunk(j, i) < ln.end(j)) {
          kx[j][i] = load_raw(x, row + ln.chunk(j, i) * V);
          kg[j][i] = load_raw(g, row + ln.chunk(j, i) * V);
        }
    // f(j, c, n, x, g) on each of partial j's chunks in order: the kept ones
    // from registers, the rest read again.
    auto each_chunk = [&](int j, auto&& f) {
#pragma unroll
      for (int i = 0; i < KEEP; ++i)
        if (ln.chunk(j, i) < ln.end(j)) {
          float xv[V], gv[V];
          unpack<T>(kx[j][i], xv);
          unpack<T>(kg[j][i], gv);
          f(ln.chunk(j, i), V, xv, gv);
        }
      ln.template each<false>(j, KEEP, dim, V, [&](int64_t c, int n) {
        float xv[V], gv[V];
        load_chunk<T, VEC>(x, row + c * V, n, xv);
        load_chunk<T, VEC>(g, row + c * V, n, gv);
        f(c, n, xv, gv);
      });
    };
    // A chunk's w and modulation factor (read from L1 in both passes).
    auto w_and_f = [&](int64_t c, int n, float (&wv)[V], float (&f)[V]) {
      load_chunk<T, VEC>(w, c * V, n, wv);
      load_factor<T, VEC>(scale, tb + c * V, n, f);
    };
    float s[M], cs[M];
#pragma unroll
    for (int j = 0; j < M; ++j) {
      s[j] = cs[j] = 0.0f;
      each_chunk(j, [&](int64_t c, int n, const float (&xv)[V], const float (&gv)[V]) {
        float wv[V], f[V];
        w_and_f(c, n, wv, f);
        add_row_terms(n, xv, gv, wv, f, s[j], cs[j]);
      });
    }
    const float2 tot = fold_lanes<M>(ln, s, cs, sm);
    const float rstd = rstd_of(tot.x, dim, a.eps);
    const float k = dx_factor(rstd, tot.y, dim);
    if (threadIdx.x == 0) rstd_out[r] = rstd;
#pragma unroll
    for (int j = 0; j < M; ++j)
      each_chunk(j, [&](int64_t c, int n, const float (&xv)[V], const float (&gv)[V]) {
        float wv[V], f[V], o[V];
        w_and_f(c, n, wv, f);
        dx_chunk(rstd, k, xv, gv, wv, f, o);
        store_chunk<T, VEC>(dx, row + c * V, n, o);
      });
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
// Where a row's chunks load as 16 bytes and each of the order's T partials
// has at most two chunks, one kernel does both passes' work and reads x and g
// once. A block of T threads walks a dweight group's rows in tile order (gate
// order, then a gate's rows in batch order, as the tile kernel does), a row
// at a time; thread t holds partial t, so the same thread owns the same
// columns for a row's statistics and for the column sums:
//   - its chunks of the next kOnePassAhead rows are copied into shared memory
//     ahead (cp.async); it reads back only its own copies, so they need no
//     barrier;
//   - the row's statistics are folded by the order's trees, every warp
//     folding the warp sums itself (one barrier a row);
//   - it writes its chunks of dx and adds the row's terms to its column sums
//     in registers: dweight for the group, dshift and dscale for the tile.
// The row kernel's and the tile kernel's sums in their orders: the same bits.

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  const unsigned s = unsigned(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Every copy of this thread's but the last N committed groups' done.
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

__device__ __forceinline__ int64_t tile_first_pos(const Plan& p, int64_t gates, int64_t t) {
  int64_t lo = 0, hi = gates;  // gate k: the last with tile_start[k] <= t
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (p.tile_start[mid] <= t) lo = mid;
    else hi = mid - 1;
  }
  return p.seg_start[lo] + (t - p.tile_start[lo]) * kRmsSegTileRows;
}

// v as an opaque new value: its unpacking stays at the use, so registers hold
// the packed 16-byte chunk rather than V floats (w and the factors are the
// same for many rows; the compiler would otherwise hoist their unpacking).
__device__ __forceinline__ uint4 opaque(const uint4& v) {
  uint4 o;
  asm volatile("mov.b32 %0, %4;\n\tmov.b32 %1, %5;\n\tmov.b32 %2, %6;\n\tmov.b32 %3, %7;\n"
               : "=r"(o.x), "=r"(o.y), "=r"(o.z), "=r"(o.w)
               : "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w));
  return o;
}

constexpr int kOnePassAhead = 2;        // rows copied ahead of the one worked
constexpr int kOnePassMaxThreads = 512;  // T at most (one block an SM, up to 128 registers a thread)
constexpr int64_t kOnePassSmemMax = 200 << 10;

// Shared memory of the one-pass kernel: kOnePassAhead + 1 rows of x and g.
int64_t onepass_smem_bytes(int64_t dim, int vec) { return int64_t(kOnePassAhead + 1) * 2 * (dim / vec) * 16; }

template <class T, int CPT>
__global__ void __launch_bounds__(kOnePassMaxThreads, 1) bwd_onepass_kernel(Ptrs a, Plan p) {
  if (*a.bad != kNoBadRow) return;
  constexpr int V = VecOf<T>::value, D = kOnePassAhead + 1;
  extern __shared__ uint4 staged[];  // [row % D][x, g][chunk]
  __shared__ float2 red[2][32];      // a row's warp sums, by row parity
  const T *x = static_cast<const T*>(a.x), *w = static_cast<const T*>(a.w);
  const T *scale = static_cast<const T*>(a.scale), *g = static_cast<const T*>(a.g);
  T* dx = static_cast<T*>(a.dx);
  const int64_t dim = a.dim, nch = dim / V;
  const int t = int(threadIdx.x), nt = int(blockDim.x), lane = t & 31, warp = t >> 5, nw = nt >> 5;
  int ch[CPT];  // this thread's chunks (nch <= 2 * kOnePassMaxThreads)
  bool own[CPT];
  uint4 wr[CPT];  // w's chunks, as loaded
#pragma unroll
  for (int m = 0; m < CPT; ++m) {
    ch[m] = t + m * nt;
    own[m] = ch[m] < nch;
    if (own[m]) wr[m] = load_raw(w, ch[m] * V);
  }
  const int64_t ntiles = p.tile_start[a.gates];
  for (int64_t grp = blockIdx.x; grp * p.tiles_per_group < ntiles; grp += gridDim.x) {
    const int64_t g0 = grp * p.tiles_per_group, g1 = min64(ntiles, g0 + p.tiles_per_group);
    // Positions and rows fit an int (rows < 2^31, checked by the entry point).
    const int P0 = int(tile_first_pos(p, a.gates, g0)), P1 = int(g1 < ntiles ? tile_first_pos(p, a.gates, g1) : a.rows);
    const int n = P1 - P0;
    auto stage = [&](int i) {
      if (i < n) {
        const int64_t row = p.rows_sorted[P0 + i];
        uint4* b = staged + (i % D) * 2 * int(nch);
#pragma unroll
        for (int m = 0; m < CPT; ++m)
          if (own[m]) {
            cp_async16(b + ch[m], x + row * dim + ch[m] * V);
            cp_async16(b + nch + ch[m], g + row * dim + ch[m] * V);
          }
      }
      cp_async_commit();
    };
#pragma unroll
    for (int i = 0; i < D - 1; ++i) stage(i);
    float dw[CPT][V], sh[CPT][V], sc[CPT][V];
    uint4 fr[CPT];  // the tile's modulation factors, exact in T: packed, for registers
#pragma unroll
    for (int m = 0; m < CPT; ++m) {
      fr[m] = make_uint4(0, 0, 0, 0);
#pragma unroll
      for (int e = 0; e < V; ++e) dw[m][e] = sh[m][e] = sc[m][e] = 0.0f;
    }
    int k = -1, ti = -1;
    auto flush = [&] {
#pragma unroll
      for (int m = 0; m < CPT; ++m)
        if (k >= 0 && own[m]) store_tile_sums<T, true>(a, p, k, ti, ch[m], V, sh[m], sc[m]);
    };
    for (int i = 0; i < n; ++i) {
      stage(i + D - 1);  // its buffer's last reads were this thread's own, before the last row's barrier
      const int pos = P0 + i, kk = p.keys_sorted[pos], tile = (pos - p.seg_start[kk]) / kRmsSegTileRows;
      const int64_t row = p.rows_sorted[pos];
      if (kk != k || tile != ti) {  // a new tile: the last one's sums out, zeros in
        flush();
        k = kk;
        ti = tile;
#pragma unroll
        for (int m = 0; m < CPT; ++m) {
#pragma unroll
          for (int e = 0; e < V; ++e) sh[m][e] = sc[m][e] = 0.0f;
          if (own[m]) fr[m] = factor_raw<T>(load_raw(scale, int64_t(k) * dim + ch[m] * V));
        }
      }
      cp_async_wait<D - 1>();
      const uint4* b = staged + (i % D) * 2 * int(nch);
      float s = 0.0f, cs = 0.0f;
#pragma unroll
      for (int m = 0; m < CPT; ++m)
        if (own[m]) {
          float xv[V], gv[V], wv[V], fv[V];
          unpack<T>(b[ch[m]], xv);
          unpack<T>(b[nch + ch[m]], gv);
          unpack<T>(opaque(wr[m]), wv);
          unpack<T>(opaque(fr[m]), fv);
          add_row_terms(V, xv, gv, wv, fv, s, cs);
        }
      s = warp_tree(s);
      cs = warp_tree(cs);
      if (lane == 0) red[i & 1][warp] = make_float2(s, cs);
      __syncthreads();
      const float2 v = lane < nw ? red[i & 1][lane] : make_float2(0.0f, 0.0f);
      const float rstd = rstd_of(warp_tree(v.x), dim, a.eps);
      const float kq = dx_factor(rstd, warp_tree(v.y), dim);
#pragma unroll
      for (int m = 0; m < CPT; ++m)
        if (own[m]) {
          float xv[V], gv[V], wv[V], fv[V], o[V];
          unpack<T>(b[ch[m]], xv);
          unpack<T>(b[nch + ch[m]], gv);
          unpack<T>(opaque(wr[m]), wv);
          unpack<T>(opaque(fr[m]), fv);
          dx_chunk(rstd, kq, xv, gv, wv, fv, o);
          *reinterpret_cast<uint4*>(dx + row * dim + ch[m] * V) = round_chunk<T>(o);
          add_col_terms<T>(rstd, xv, gv, wv, fv, sh[m], sc[m], dw[m]);
        }
    }
    flush();
#pragma unroll
    for (int m = 0; m < CPT; ++m)
      if (own[m]) {
        float4* o = reinterpret_cast<float4*>(p.dw_part + grp * dim + ch[m] * V);
#pragma unroll
        for (int q = 0; q < V / 4; ++q) o[q] = make_float4(dw[m][4 * q], dw[m][4 * q + 1], dw[m][4 * q + 2], dw[m][4 * q + 3]);
      }
  }
}

// The partials folded in order. dweight's columns each sum every group's
// partial, a chain of hundreds to thousands of adds: a block per 32 columns
// stages the groups' rows in shared memory, its eight warps loading the next
// kFoldRows rows while warp 0 adds the last ones, so the chain waits on
// shared memory, not on DRAM (the chain by a thread a column, 32 loads ahead,
// took 99 us at bf16 32768 x 5376 x 9 on the H200: 1,033 groups). dshift and
// dscale of gates with several tiles (a thread an element, kFoldAhead loads
// issued at once, then added in order) and gates without rows (zeros) take
// the blocks after those.
constexpr int kFoldThreads = 256, kFoldCols = 32, kFoldRows = 192;  // two buffers of 24 KB
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
__global__ void __launch_bounds__(kFoldThreads) bwd_fold_kernel(Ptrs a, Plan p) {
  if (*a.bad != kNoBadRow) return;
  const int64_t dim = a.dim, gates = a.gates, total = gates * dim;
  const int64_t ntiles = p.tile_start[gates];
  const int dwb = fold_dw_blocks(dim);
  if (int(blockIdx.x) < dwb) {
    fold_dweight<T>(a, p, (ntiles + p.tiles_per_group - 1) / p.tiles_per_group, int64_t(blockIdx.x) * kFoldCols);
    return;
  }
  T *dshift = static_cast<T*>(a.dshift), *dscale = static_cast<T*>(a.dscale);
  const int64_t nb = int64_t(gridDim.x) - dwb;
  for (int64_t e = (blockIdx.x - dwb) * int64_t(blockDim.x) + threadIdx.x; e < total; e += nb * blockDim.x) {
    const int64_t k = e / dim, j = e - k * dim;
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
    const float part[1] = {s}, zero[1] = {0.0f};
    const float rstd = rstd_of(fold_lanes<1>(Lanes<1>(dim, V), part, zero, sm).x, dim, a.eps);
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

int key_bits(int64_t gates) { return rmsnorm_gate_key_bits(gates, 31); }  // the plan's int keys

// The row kernels' three paths: 16-byte loads with the row kept in registers
// (kRmsChunksPerThread chunks a partial: every dim up to 2,048 chunks),
// 16-byte loads that read the rest of a wider row again for the second pass,
// element loads (any dim, any alignment).
enum class RowPath { kept, vector, element };
RowPath row_path(bool vec, int64_t dim, int v) {
  const int64_t nch = (dim + v - 1) / v;
  return !vec ? RowPath::element : nch <= int64_t(kRmsChunksPerThread) * rms_row_threads(dim, v) ? RowPath::kept
                                                                                                 : RowPath::vector;
}

int row_blocks(int64_t rows) { return int(rows < kMaxGridRows ? rows : kMaxGridRows); }

template <class T, int MAXT>
void launch_fwd_bounded(const Ptrs& a, bool vec, int threads, cudaStream_t s) {
  constexpr int V = VecOf<T>::value, M = kLanesPerThread;
  const int blocks = row_blocks(a.rows);
  switch (row_path(vec, a.dim, V)) {
    case RowPath::kept: fwd_kernel<T, true, kRmsChunksPerThread, M, MAXT><<<blocks, threads, 0, s>>>(a); break;
    case RowPath::vector: fwd_kernel<T, true, 0, M, MAXT><<<blocks, threads, 0, s>>>(a); break;
    case RowPath::element: fwd_kernel<T, false, 0, M, MAXT><<<blocks, threads, 0, s>>>(a); break;
  }
}

template <class T>
void launch_fwd(const Ptrs& a, bool vec, cudaStream_t s) {
  const int threads = row_kernel_threads(a.dim, VecOf<T>::value);
  if (threads <= kRowKernelNarrowThreads) launch_fwd_bounded<T, kRowKernelNarrowThreads>(a, vec, threads, s);
  else launch_fwd_bounded<T, kRowKernelMaxThreads>(a, vec, threads, s);
}

// The one-pass kernel where it applies (16-byte loads, at most two chunks a
// partial, T <= kOnePassMaxThreads, its rows in shared memory) and
// pays (dweight groups for two waves of one block an SM at least: fewer leave
// SMs idle, and the two passes spread the rows wider): a block a dweight
// group. False: the two passes' problem.
int sm_count() {
  static const int n = [] {
    int dev = 0, c = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&c, cudaDevAttrMultiProcessorCount, dev);
    return c > 0 ? c : 1;
  }();
  return n;
}

template <class T, int CPT>
void launch_onepass_k(const Ptrs& a, const Plan& p, int threads, int64_t groups, cudaStream_t s) {
  // The kernel's dynamic shared memory limit, raised once to the most it takes.
  static const cudaError_t raised = cudaFuncSetAttribute(
      bwd_onepass_kernel<T, CPT>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kOnePassSmemMax));
  (void)raised;  // a failure shows as the launch's error
  const unsigned grid = unsigned(groups < 65535 ? groups : 65535);
  bwd_onepass_kernel<T, CPT><<<grid, threads, size_t(onepass_smem_bytes(a.dim, VecOf<T>::value)), s>>>(a, p);
}

template <class T>
bool launch_onepass(const Ptrs& a, const Plan& p, bool vec, int64_t groups, bool forced, cudaStream_t s) {
  constexpr int V = VecOf<T>::value;
  const int threads = rms_row_threads(a.dim, V);
  const int64_t nch = a.dim / V;
  if (!vec || threads > kOnePassMaxThreads || nch > int64_t(kRmsChunksPerThread) * threads ||
      onepass_smem_bytes(a.dim, V) > kOnePassSmemMax || (!forced && groups < 2 * sm_count()))
    return false;
  if (a.rows == 0) return true;
  if (nch <= threads) launch_onepass_k<T, 1>(a, p, threads, groups, s);
  else launch_onepass_k<T, 2>(a, p, threads, groups, s);
  return true;
}

template <class T>
void launch_two_pass(const Ptrs& a, const Plan& p, bool vec, int64_t nch, int64_t groups, cudaStream_t s);

std::atomic<RmsBwdKernels> bwd_kernels{kRmsBwdKernelsDefault};

template <class T>
void launch_bwd(const Ptrs& a, const Layout& l, bool vec, cudaStream_t s) {
  Plan p{l.seg_start, l.tiles, l.tile_start, l.multi_start, l.rows_sorted, l.keys_sorted, l.rstd, l.seg_part, l.dw_part,
         rms_tiles_per_group(a.rows, a.gates)};
  const int64_t nch = (a.dim + VecOf<T>::value - 1) / VecOf<T>::value;
  const int64_t groups = (rms_max_tiles(a.rows, a.gates) + p.tiles_per_group - 1) / p.tiles_per_group;
  const RmsBwdKernels k = bwd_kernels.load();
  if (k == RmsBwdKernels::two_pass || !launch_onepass<T>(a, p, vec, groups, k == RmsBwdKernels::one_pass, s))
    launch_two_pass<T>(a, p, vec, nch, groups, s);
  const int64_t fb = (a.gates * a.dim + kFoldThreads - 1) / kFoldThreads;
  bwd_fold_kernel<T><<<unsigned(fold_dw_blocks(a.dim) + (fb < 4096 ? fb : 4096)), kFoldThreads, 0, s>>>(a, p);
}

template <class T, int MAXT>
void launch_rows_bounded(const Ptrs& a, float* rstd, bool vec, int threads, cudaStream_t s) {
  constexpr int V = VecOf<T>::value, M = kLanesPerThread;
  const int blocks = row_blocks(a.rows);
  switch (row_path(vec, a.dim, V)) {
    case RowPath::kept: bwd_row_kernel<T, true, kRmsChunksPerThread, M, MAXT><<<blocks, threads, 0, s>>>(a, rstd); break;
    case RowPath::vector: bwd_row_kernel<T, true, 0, M, MAXT><<<blocks, threads, 0, s>>>(a, rstd); break;
    case RowPath::element: bwd_row_kernel<T, false, 0, M, MAXT><<<blocks, threads, 0, s>>>(a, rstd); break;
  }
}

template <class T>
void launch_rows(const Ptrs& a, float* rstd, bool vec, cudaStream_t s) {
  const int threads = row_kernel_threads(a.dim, VecOf<T>::value);
  if (threads <= kRowKernelNarrowThreads) launch_rows_bounded<T, kRowKernelNarrowThreads>(a, rstd, vec, threads, s);
  else launch_rows_bounded<T, kRowKernelMaxThreads>(a, rstd, vec, threads, s);
}

// The row kernel (dx, rstd), then the tile kernel (dshift, dscale and dweight
// partials), reading x and g again.
template <class T>
void launch_two_pass(const Ptrs& a, const Plan& p, bool vec, int64_t nch, int64_t groups, cudaStream_t s) {
  if (a.rows > 0) {
    launch_rows<T>(a, const_cast<float*>(p.rstd), vec, s);
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

Status rmsnorm_modulate_cuda_check_size(const OpCall& c) {
  if (c.p.rows <= INT32_MAX && c.p.gates <= INT32_MAX) return Status::success();
  return Status::error(ErrorKind::size_overflow,
                       (c.pass == Pass::forward ? c.op->fwd_name() : c.op->bwd_name()) +
                           ": rows and gates must each be below 2^31 for the cuda kernels");
}

Status rmsnorm_modulate_cuda_run(const OpCall& c, unsigned long long* bad_row, void* scratch) {
  const char* op = c.pass == Pass::forward ? "rmsnorm_modulate_fwd" : "rmsnorm_modulate_bwd";
  Status s = rmsnorm_modulate_cuda_check_size(c);
  if (!s.ok()) return s;
  if (!dispatch_dtype(DType(c.p.dtype), [&](auto tag) { s = run_typed<decltype(tag)>(c, bad_row, scratch); }))
    return check_problem(op, c.p, 1u << GATECHECK_CUDA);  // (an unchecked call): names the bad dtype
  return s;
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
  if (!dispatch_dtype(DType(c.p.dtype), launch))  // (an unchecked call): the error names the bad dtype
    return check_problem("rmsnorm_modulate_rstd", c.p, 1u << GATECHECK_CUDA);
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? Status::success() : cuda_error("rmsnorm_modulate_rstd", e);
}

Status rmsnorm_modulate_cuda_dx(const OpCall& c, const unsigned long long* bad, float* rstd) {
  const Ptrs a = ptrs_of(c, bad);
  if (a.rows == 0 || a.dim == 0) return Status::success();
  const auto s = static_cast<cudaStream_t>(c.p.stream);
  if (!dispatch_dtype(DType(c.p.dtype), [&](auto tag) {
        using T = decltype(tag);
        launch_rows<T>(a, rstd, vector_ok(a, int(sizeof(T))), s);
      }))  // (an unchecked call): the error names the bad dtype
    return check_problem("rmsnorm_modulate_bwd", c.p, 1u << GATECHECK_CUDA);
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? Status::success() : cuda_error("rmsnorm_modulate_bwd", e);
}

}  // namespace gatecheck
