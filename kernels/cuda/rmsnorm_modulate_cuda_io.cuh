// rmsnorm_modulate's chunk loads and stores for the fast row kernels. A chunk
// is V = 16 / sizeof(T) consecutive elements of a row (the order's chunk); it
// travels as one raw 16-byte word (uint4) so that a thread can keep several
// chunks in flight for 4 registers each, whatever the dtype.
//
// Any alignment, one code: a chunk on a 16-byte boundary is one 16-byte load;
// a chunk off it (odd dims, unaligned views) is two aligned 16-byte loads of
// the same row and a funnel shift (neighbouring threads share the lines, so
// the traffic stays one pass); a chunk whose aligned neighbours leave the row
// (a row's first or last chunk, a short last chunk) is loaded element by
// element. Every path fills the same bits, so the order is the element index
// alone. Nothing outside a row is read, so memcheck sees no stray bytes.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "../gate_residual_dtype.h"

namespace gatecheck {
namespace rms_cuda {

template <class T> struct Vec { static constexpr int value = 16 / int(sizeof(T)); };

// Element e of a raw chunk as a float (e a compile-time constant after unrolling).
template <class T> __device__ __forceinline__ float elem(const uint4& u, int e) {
  const uint32_t w = e * int(sizeof(T)) < 4 ? u.x : e * int(sizeof(T)) < 8 ? u.y : e * int(sizeof(T)) < 12 ? u.z : u.w;
  if constexpr (sizeof(T) == 4) {
    return __uint_as_float(w);
  } else {
    const uint16_t h = uint16_t((e & 1) ? w >> 16 : w & 0xffffu);
    T t;
    t.bits = h;
    return to_float(t);
  }
}

__device__ __forceinline__ uint32_t word_of(const uint4& u, int i) {
  return i == 0 ? u.x : i == 1 ? u.y : i == 2 ? u.z : u.w;
}

// Elements [0, n) of the chunk at p (row-relative index j, row length dim);
// elements past n read as zero bits.
template <class T>
__device__ __forceinline__ uint4 load_chunk_raw(const T* row, int64_t j, int64_t dim) {
  constexpr int V = Vec<T>::value;
  const T* p = row + j;
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  const uintptr_t lo = reinterpret_cast<uintptr_t>(row), hi = reinterpret_cast<uintptr_t>(row + dim);
  const uintptr_t base = a & ~uintptr_t(15);
  if (j + V <= dim) {
    if (base == a) return __ldg(reinterpret_cast<const uint4*>(p));
    if (base >= lo && base + 32 <= hi) {
      const uint4 u0 = __ldg(reinterpret_cast<const uint4*>(base));
      const uint4 u1 = __ldg(reinterpret_cast<const uint4*>(base + 16));
      const uint32_t w[8] = {u0.x, u0.y, u0.z, u0.w, u1.x, u1.y, u1.z, u1.w};
      const unsigned off = unsigned(a - base), q = off >> 2, sh = (off & 3u) * 8u;
      uint32_t s[7];
#pragma unroll
      for (int i = 0; i < 7; ++i) s[i] = __funnelshift_r(w[i], w[i + 1], sh);
      uint32_t o[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) o[i] = q == 0 ? s[i] : q == 1 ? s[i + 1] : q == 2 ? s[i + 2] : s[i + 3];
      return make_uint4(o[0], o[1], o[2], o[3]);
    }
  }
  // Element by element (the row's edges).
  uint32_t o[4] = {0, 0, 0, 0};
#pragma unroll
  for (int e = 0; e < V; ++e) {
    if (j + e < dim) {
      if constexpr (sizeof(T) == 4) {
        o[e] = __float_as_uint(__ldg(reinterpret_cast<const float*>(p) + e));
      } else {
        const uint32_t h = __ldg(reinterpret_cast<const unsigned short*>(p) + e);
        o[e >> 1] |= (e & 1) ? h << 16 : h;
      }
    }
  }
  return make_uint4(o[0], o[1], o[2], o[3]);
}

// Packs V floats, rounded to T, into a raw chunk.
template <class T> __device__ __forceinline__ uint4 pack(const float (&v)[Vec<T>::value]) {
  uint32_t o[4];
  if constexpr (sizeof(T) == 4) {
#pragma unroll
    for (int i = 0; i < 4; ++i) o[i] = __float_as_uint(round_to<float>(v[i]));
  } else {
#pragma unroll
    for (int i = 0; i < 4; ++i) o[i] = uint32_t(round_to<T>(v[2 * i]).bits) | uint32_t(round_to<T>(v[2 * i + 1]).bits) << 16;
  }
  return make_uint4(o[0], o[1], o[2], o[3]);
}

// Two floats rounded to T, packed into one word (the first in the low half);
// a float rounded to f32 for 4-byte T (b unused).
template <class T> __device__ __forceinline__ uint32_t pack2(float a, float b) {
  if constexpr (sizeof(T) == 4) return __float_as_uint(round_to<float>(a));
  else return uint32_t(round_to<T>(a).bits) | uint32_t(round_to<T>(b).bits) << 16;
}

// Stores elements [0, min(V, dim - j)) of u at row + j, with the widest
// stores the address allows (stores never touch a neighbour's bytes).
template <class T>
__device__ __forceinline__ void store_chunk_raw(T* row, int64_t j, int64_t dim, const uint4& u) {
  constexpr int V = Vec<T>::value;
  T* p = row + j;
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  if (j + V <= dim) {
    if ((a & 15u) == 0) {
      *reinterpret_cast<uint4*>(p) = u;
      return;
    }
    if ((a & 7u) == 0) {
      reinterpret_cast<uint2*>(p)[0] = make_uint2(u.x, u.y);
      reinterpret_cast<uint2*>(p)[1] = make_uint2(u.z, u.w);
      return;
    }
    if ((a & 3u) == 0) {
      uint32_t* q = reinterpret_cast<uint32_t*>(p);
      q[0] = u.x;
      q[1] = u.y;
      q[2] = u.z;
      q[3] = u.w;
      return;
    }
    if constexpr (sizeof(T) == 2) {  // 2 bytes past a 4-byte boundary: 1 + 3 words + 1
      unsigned short* h = reinterpret_cast<unsigned short*>(p);
      uint32_t* q = reinterpret_cast<uint32_t*>(h + 1);
      h[0] = (unsigned short)(u.x & 0xffffu);
      q[0] = __funnelshift_r(u.x, u.y, 16);
      q[1] = __funnelshift_r(u.y, u.z, 16);
      q[2] = __funnelshift_r(u.z, u.w, 16);
      h[7] = (unsigned short)(u.w >> 16);
      return;
    }
  }
#pragma unroll
  for (int e = 0; e < V; ++e) {
    if (j + e < dim) {
      if constexpr (sizeof(T) == 4) {
        reinterpret_cast<uint32_t*>(p)[e] = word_of(u, e);
      } else {
        const uint32_t w = word_of(u, e >> 1);
        reinterpret_cast<unsigned short*>(p)[e] = (unsigned short)((e & 1) ? w >> 16 : w & 0xffffu);
      }
    }
  }
}

}  // namespace rms_cuda
}  // namespace gatecheck
