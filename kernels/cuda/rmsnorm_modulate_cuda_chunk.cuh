// rmsnorm_modulate's CUDA kernels: their arguments (Ptrs), and what every kernel
// does with a 16-byte chunk of a row: its loads (16 bytes, or element by element
// off alignment), its values as floats, its roundings to the type, its stores.
// Included by rmsnorm_modulate_cuda.cu alone, as its other rmsnorm_modulate_cuda_*.cuh.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "../gate_residual_dtype.h"
#include "rmsnorm_modulate_cuda_pair.cuh"
#include "rmsnorm_modulate_cuda_unaligned.cuh"

namespace gatecheck {
namespace rmsnorm_cuda_detail {

constexpr unsigned long long kNoBadRow = ~0ull;

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

}  // namespace rmsnorm_cuda_detail
}  // namespace gatecheck
