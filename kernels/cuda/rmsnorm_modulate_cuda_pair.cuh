// Two 16-bit values (bf16 or f16) in one 32-bit word, the lower index in the
// low half as a 16-byte chunk holds them, and the packed instructions that
// round once into the type (sm_90: add/mul.rn.bf16x2, add/mul.rn.f16x2).
//
// Why the bits equal the scalar path's rn<T>(fp32 op): for + and x of two
// p-bit operands, rounding the exact result to fp32 (24 bits) and then to p
// bits gives the same value as rounding it once to p bits whenever
// 24 >= 2p + 2 (double rounding is innocuous; Figueroa 1995). bf16 has p = 8,
// f16 p = 11, so both qualify, with subnormals, overflow and signed zeros.
// A NaN may keep the hardware's payload: as with round_inner, only a final
// round_to (which canonicalises NaNs) may follow.
#pragma once

#include <cstdint>

#include "../gate_residual_dtype.h"

namespace gatecheck {

// The packed operations of a pair type (PTX's bf16x2 or f16x2): (rn(l), rn(h))
// from two floats in one cvt, and + and x of two pairs, each rounded once.
#define GC_PAIR_OPS(PTX_TYPE)                                                        \
  static __device__ __forceinline__ uint32_t rn(float l, float h) {                  \
    uint32_t d;                                                                      \
    asm("cvt.rn." PTX_TYPE ".f32 %0, %1, %2;" : "=r"(d) : "f"(h), "f"(l));           \
    return d;                                                                        \
  }                                                                                  \
  static __device__ __forceinline__ uint32_t add(uint32_t a, uint32_t b) {           \
    uint32_t d;                                                                      \
    asm("add.rn." PTX_TYPE " %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));               \
    return d;                                                                        \
  }                                                                                  \
  static __device__ __forceinline__ uint32_t mul(uint32_t a, uint32_t b) {           \
    uint32_t d;                                                                      \
    asm("mul.rn." PTX_TYPE " %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));               \
    return d;                                                                        \
  }

template <class T> struct Pair;

template <> struct Pair<bf16_t> {
  static constexpr uint32_t kOnes = 0x3f803f80u;  // (1, 1)
  static __device__ __forceinline__ float lo(uint32_t w) { return __uint_as_float(w << 16); }
  static __device__ __forceinline__ float hi(uint32_t w) { return __uint_as_float(w & 0xffff0000u); }
  GC_PAIR_OPS("bf16x2")
};

template <> struct Pair<f16_t> {
  static constexpr uint32_t kOnes = 0x3c003c00u;
  static __device__ __forceinline__ float lo(uint32_t w) {
    float f;
    asm("{ .reg .b16 l, h; mov.b32 {l, h}, %1; cvt.f32.f16 %0, l; }" : "=f"(f) : "r"(w));
    return f;
  }
  static __device__ __forceinline__ float hi(uint32_t w) {
    float f;
    asm("{ .reg .b16 l, h; mov.b32 {l, h}, %1; cvt.f32.f16 %0, h; }" : "=f"(f) : "r"(w));
    return f;
  }
  GC_PAIR_OPS("f16x2")
};

#undef GC_PAIR_OPS

template <class T> constexpr bool kPacked = sizeof(T) == 2;

__device__ __forceinline__ uint32_t word(const uint4& u, int q) { return q == 0 ? u.x : q == 1 ? u.y : q == 2 ? u.z : u.w; }

// A chunk's modulation factors rn(1 + scale), packed: the scalar
// modulation_factor's bits (NaN payloads aside).
template <class T>
__device__ __forceinline__ uint4 factor_chunk(const uint4& sc) {
  using P = Pair<T>;
  return make_uint4(P::add(P::kOnes, sc.x), P::add(P::kOnes, sc.y), P::add(P::kOnes, sc.z), P::add(P::kOnes, sc.w));
}

}  // namespace gatecheck
