// Vector access for the kernels: a Pack of N elements moved with one load or
// store of N*sizeof(T) bytes (16, 8, 4 or 2). Callers guarantee alignment; the
// dispatcher picks N so that every row start of every tensor is aligned.
#pragma once

#include <cstdint>
#include <cstring>

namespace gatecheck {
namespace cuda_detail {

template <class T, int N>
struct Pack {
  T e[N];
};

template <int Bytes> struct RawOf;
template <> struct RawOf<16> { using type = uint4; };
template <> struct RawOf<8> { using type = uint2; };
template <> struct RawOf<4> { using type = unsigned int; };
template <> struct RawOf<2> { using type = unsigned short; };

// Read-only path (ld.global.nc): inputs are never written by the same kernel.
template <class T, int N>
__device__ __forceinline__ Pack<T, N> load_pack(const T* p) {
  using Raw = typename RawOf<N * int(sizeof(T))>::type;
  const Raw r = __ldg(reinterpret_cast<const Raw*>(p));
  Pack<T, N> v;
  memcpy(&v, &r, sizeof r);
  return v;
}

// One store instruction, said explicitly: through a plain assignment nvcc 13.0
// split the backward kernels' 16-byte stores of grad_res and grad_y into four
// 4-byte stores (seen in their PTX and SASS), a quarter of each 32-byte sector
// per instruction, which more than doubled their store-issue time.
template <class T, int N>
__device__ __forceinline__ void store_pack(T* p, const Pack<T, N>& v) {
  using Raw = typename RawOf<N * int(sizeof(T))>::type;
  Raw r;
  memcpy(&r, &v, sizeof r);
  __stwb(reinterpret_cast<Raw*>(p), r);
}

}  // namespace cuda_detail
}  // namespace gatecheck
