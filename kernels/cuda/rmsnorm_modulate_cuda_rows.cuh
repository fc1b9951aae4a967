// rmsnorm_modulate's row kernels' shape (Lanes: a warp plays about three of the
// order's warps) and the forward (fwd_kernel).
#pragma once

#include <cstdint>

#include "../rmsnorm_modulate_order.h"
#include "rmsnorm_modulate_cuda_chunk.cuh"
#include "rmsnorm_modulate_cuda_pair.cuh"

namespace gatecheck {
namespace rmsnorm_cuda_detail {

// Thread t of a row's T = rms_row_threads(dim) threads owns chunks t, t + T,
// ... (its partial of the order). T is chosen so that a thread owns about
// kRmsChunksPerThread chunks; where every tensor takes 16-byte loads, the
// first KEEP of them stay in registers, as loaded, from the reduction to the
// second pass, so that x (and g) are read from memory once. Every load of a
// row is issued before its reduction, so a block waits on one memory latency.

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

// The forward's second pass off alignment, 16-bit types: chunk c of a row
// (n elements; every lane of the warp calls it, as store_unaligned needs)
// from x's raw chunk xr, the other tensors' raw chunks as the unaligned loads
// shift them (w's unshifted where w is aligned: they follow its start), in
// the vector path's packed math; bytes past n are computed and not stored.
// tb: the row's gate row in the tables.
template <class T>
__device__ __forceinline__ void fwd_put_unaligned(const Ptrs& a, bool w_aligned, float rstd, int64_t row, int64_t tb,
                                                  int64_t c, int n, const uint4& xr) {
  constexpr int V = VecOf<T>::value;
  const T *w = static_cast<const T*>(a.w), *shift = static_cast<const T*>(a.shift);
  const T* scale = static_cast<const T*>(a.scale);
  const int64_t dim = a.dim, nt = a.gates * dim;
  const uint4 wr = w_aligned && n == V ? load_raw(w, c * V) : load_unaligned(w, dim, c * V, n);
  store_unaligned<T>(static_cast<T*>(a.out), row + c * V, n,
                     fwd_chunk_packed<T>(rstd, xr, wr, load_unaligned(shift, nt, tb + c * V, n),
                                         load_unaligned(scale, nt, tb + c * V, n)));
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
    } else if constexpr (kPacked<T>) {
      // Off alignment, 16-bit types (rows too wide for fwd_staged_kernel): x
      // read again, raw. 72 registers against 80 (bf16) and 105 (f16) in
      // float math, and at bf16 32768 x 5001 x 9 on the H200 a forward of
      // 620.3 us against 729.9 in the same run
      // (bench/results/rms_kernels/element-packed/).
      const bool w_aligned = (reinterpret_cast<uintptr_t>(w) & 15) == 0;
#pragma unroll
      for (int j = 0; j < M; ++j)
        ln.template each<true>(j, 0, dim, V, [&](int64_t c, int n) {
          fwd_put_unaligned<T>(a, w_aligned, rstd, row, tb, c, n, load_unaligned(x, nx, row + c * V, n));
        });
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

}  // namespace rmsnorm_cuda_detail
}  // namespace gatecheck
