// rmsnorm_modulate's backward row kernel (dx and rstd per row), and rstd alone.
#pragma once

#include <cstdint>

#include "rmsnorm_modulate_cuda_bwd_terms.cuh"
#include "rmsnorm_modulate_cuda_rows.cuh"

namespace gatecheck {
namespace rmsnorm_cuda_detail {

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

}  // namespace rmsnorm_cuda_detail
}  // namespace gatecheck
