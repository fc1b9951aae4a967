// 16-byte chunks of a tensor at any alignment, for rows whose starts are not
// 16-byte aligned (dim not a multiple of the chunk, unaligned views). A
// chunk's bytes come from the two aligned 16-byte blocks that hold them,
// shifted together in registers; only blocks wholly inside the tensor are
// read that way, the rest element by element. Stores go the other way: a warp
// whose lanes hold consecutive chunks writes whole aligned blocks, each lane
// its chunk's tail and the next lane's head, and every byte another lane
// cannot cover element by element. The values are the element path's, bit
// for bit: this changes how bytes move, never which ones or in what order
// they are summed.
#pragma once

#include <cstdint>

#include "../gate_residual_dtype.h"

namespace gatecheck {

// The 16 bytes from byte `off` (0..15) of a then b (a's bytes first).
__device__ __forceinline__ uint4 shift_bytes(const uint4& a, const uint4& b, int off) {
  const uint32_t w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
  const int q0 = off >> 2, s = (off & 3) * 8;
  uint32_t r[5];
#pragma unroll
  for (int k = 0; k < 5; ++k)  // w[k + q0] by selects: no local memory
    r[k] = q0 == 0 ? w[k] : q0 == 1 ? w[k + 1] : q0 == 2 ? w[k + 2] : w[k + 3];
  return make_uint4(__funnelshift_r(r[0], r[1], s), __funnelshift_r(r[1], r[2], s), __funnelshift_r(r[2], r[3], s),
                    __funnelshift_r(r[3], r[4], s));
}

// Element e's bits of a chunk of T as 16-byte words hold them.
template <class T>
__device__ __forceinline__ uint32_t element_bits(const uint4& u, int e) {
  const uint32_t w[4] = {u.x, u.y, u.z, u.w};
  if constexpr (sizeof(T) == 2) return (w[e >> 1] >> (16 * (e & 1))) & 0xffffu;
  else return w[e];
}

template <class T>
__device__ __forceinline__ void store_element_bits(T* at, uint32_t bits) {
  if constexpr (sizeof(T) == 2) *reinterpret_cast<uint16_t*>(at) = uint16_t(bits);
  else *reinterpret_cast<uint32_t*>(at) = bits;
}

// The raw chunk of p[j0, j0 + n) (n <= 16 / sizeof(T)) of a tensor of
// `count` elements; bytes past the n elements are unspecified. n = 0: none.
template <class T>
__device__ __forceinline__ uint4 load_unaligned(const T* p, int64_t count, int64_t j0, int n) {
  constexpr int S = int(sizeof(T));
  const uintptr_t at = reinterpret_cast<uintptr_t>(p + j0), b = at & ~uintptr_t(15);
  const int off = int(at - b);
  const bool two = off + n * S > 16;
  if (n > 0 && b >= reinterpret_cast<uintptr_t>(p) && b + (two ? 32 : 16) <= reinterpret_cast<uintptr_t>(p + count)) {
    const uint4 lo = __ldg(reinterpret_cast<const uint4*>(b));
    return off == 0 ? lo : shift_bytes(lo, two ? __ldg(reinterpret_cast<const uint4*>(b + 16)) : lo, off);
  }
  uint32_t w[4] = {0, 0, 0, 0};  // the tensor's first or last bytes: element by element
  const uint16_t* h = reinterpret_cast<const uint16_t*>(p + j0);
#pragma unroll
  for (int e = 0; e < 16 / S; ++e)
    if (e < n) {
      if constexpr (S == 2) w[e >> 1] |= uint32_t(__ldg(h + e)) << (16 * (e & 1));
      else w[e] = __ldg(reinterpret_cast<const uint32_t*>(p + j0) + e);
    }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

// Stores the first n elements of chunk r at p + j0. Every lane of the warp
// calls it at once, lane l with the chunk just after lane l - 1's (n = 0 for
// a lane without one), so the chunks' offset from 16-byte alignment is the
// warp's.
template <class T>
__device__ __forceinline__ void store_unaligned(T* p, int64_t j0, int n, const uint4& r) {
  constexpr int S = int(sizeof(T)), V = 16 / S;
  const unsigned all = 0xffffffffu;
  const int lane = int(threadIdx.x & 31);
  const uintptr_t at = reinterpret_cast<uintptr_t>(p + j0), b = at & ~uintptr_t(15);
  const int off = int(at - b);
  auto each = [&](int from, int to) {
#pragma unroll
    for (int e = 0; e < V; ++e)
      if (e >= from && e < to) store_element_bits(p + j0 + e, element_bits<T>(r, e));
  };
  if (off == 0) {  // the warp's chunks are aligned
    if (n == V) *reinterpret_cast<uint4*>(at) = r;
    else each(0, n);
    return;
  }
  // The block after this lane's first: its tail, then the next lane's head.
  const uint4 next = make_uint4(__shfl_down_sync(all, r.x, 1), __shfl_down_sync(all, r.y, 1),
                                __shfl_down_sync(all, r.z, 1), __shfl_down_sync(all, r.w, 1));
  const int next_n = __shfl_down_sync(all, n, 1), split = (16 - off) / S;
  const bool whole = lane < 31 && n == V && next_n >= split;
  if (whole) *reinterpret_cast<uint4*>(b + 16) = shift_bytes(r, next, 16 - off);
  else each(split, n);
  const bool head_done = __shfl_up_sync(all, int(whole), 1) != 0 && lane > 0;
  if (!head_done) each(0, n < split ? n : split);
}

}  // namespace gatecheck
