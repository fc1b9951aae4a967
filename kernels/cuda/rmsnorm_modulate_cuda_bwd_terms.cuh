// rmsnorm_modulate's backward, per element: the formulas every backward kernel
// shares (the modulation's factor, dx, a row's and a column's terms).
#pragma once

#include <cstdint>

#include "rmsnorm_modulate_cuda_chunk.cuh"

namespace gatecheck {
namespace rmsnorm_cuda_detail {

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
// s += x^2, cs += (w * d) * x with the last product fused, d = g * f.
template <int V>
__device__ __forceinline__ void add_row_terms(int n, const float (&xv)[V], const float (&gv)[V], const float (&wv)[V],
                                              const float (&f)[V], float& s, float& cs) {
#pragma unroll
  for (int e = 0; e < V; ++e)
    if (e < n) {
      s = __fadd_rn(s, __fmul_rn(xv[e], xv[e]));
      cs = __fmaf_rn(__fmul_rn(wv[e], __fmul_rn(gv[e], f[e])), xv[e], cs);
    }
}

// dx's second term's factor: rstd^3 * sum(w * d * x) / dim.
__device__ __forceinline__ float dx_factor(float rstd, float cs, int64_t dim) {
  return __fdiv_rn(__fmul_rn(__fmul_rn(__fmul_rn(rstd, rstd), rstd), cs), float(dim));
}

// A chunk of dx: rstd * w * d - x * kq, the last product fused.
template <int V>
__device__ __forceinline__ void dx_chunk(float rstd, float kq, const float (&xv)[V], const float (&gv)[V],
                                         const float (&wv)[V], const float (&f)[V], float (&o)[V]) {
#pragma unroll
  for (int e = 0; e < V; ++e)
    o[e] = __fmaf_rn(-xv[e], kq, __fmul_rn(__fmul_rn(rstd, wv[e]), __fmul_rn(gv[e], f[e])));
}

// One row's terms of the column sums: dshift += g, dscale += g * n,
// dweight += (d * x) * rstd, the products by n and by rstd fused with the add.
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
    sc[e] = __fmaf_rn(gv[e], nv[e], sc[e]);
    dw[e] = __fmaf_rn(__fmul_rn(d, xv[e]), rs, dw[e]);
  }
}

}  // namespace rmsnorm_cuda_detail
}  // namespace gatecheck
