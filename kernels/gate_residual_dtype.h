// Storage types and round-to-nearest-even conversions for bf16, fp16 and fp32,
// written once for host and device so that the host twin and the CUDA kernels
// round bit for bit alike (no dependence on cuda_fp16.h or compiler intrinsics).
//
// NaN results are canonical: bf16 0x7FC0, fp16 0x7E00, fp32 0x7FC00000, with
// no sign. The hardware's own NaN payloads and signs differ between x86 (whose
// default NaN is negative, and which propagates an operand's sign) and the GPU
// (always 0x7FFFFFFF), so canonicalising keeps host and device identical. (c10
// keeps the sign for fp16 on the CPU, and produces 0x7FFF on CUDA.)
//
// On the device, the conversions use the hardware's cvt instructions, which
// are exact (f16 -> f32) and IEEE round-to-nearest-even (f32 -> f16, f32 ->
// bf16), so they agree bit for bit with the portable code below for every
// non-NaN value (NaN is tested first and canonicalised on both sides):
// tests/cuda/cuda_conversions_test.cu checks every fp32 pattern on the device
// against the portable code, and a sample against the host.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__CUDACC__)
#define GC_HD __host__ __device__ __forceinline__
#else
#define GC_HD inline
#endif

namespace gatecheck {

// Values match enum gatecheck_dtype in gatecheck_plugin.h.
enum class DType : int32_t { f32 = 0, f16 = 1, bf16 = 2 };

struct bf16_t { uint16_t bits; };
struct f16_t { uint16_t bits; };

GC_HD uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

GC_HD float bits_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

GC_HD bool is_nan_bits32(uint32_t u) { return (u & 0x7fffffffu) > 0x7f800000u; }

// GATECHECK_PORTABLE_ROUNDING: a measuring build that rounds with the portable
// code on the device too (timed by the device stage `ab`; for bf16 the integer
// rounding the cvt replaced, for fp16 slower than any earlier code, which used cvt).
#if defined(__CUDA_ARCH__) && !defined(GATECHECK_PORTABLE_ROUNDING)
#define GATECHECK_DEVICE_CVT 1
#else
#define GATECHECK_DEVICE_CVT 0
#endif

#if GATECHECK_DEVICE_CVT
// The hardware's IEEE round-to-nearest-even conversion from fp32 (cvt.rn). A
// NaN comes out as the hardware's own NaN: callers test for NaN first where
// the result is final.
template <class T> __device__ __forceinline__ T cvt_rn(float f);
template <> __device__ __forceinline__ bf16_t cvt_rn<bf16_t>(float f) {
  unsigned short h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return bf16_t{h};
}
template <> __device__ __forceinline__ f16_t cvt_rn<f16_t>(float f) {
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return f16_t{h};
}
#endif

// ---- bf16 -------------------------------------------------------------------
GC_HD float to_float(bf16_t v) { return bits_float(uint32_t(v.bits) << 16); }

// The portable rounding (the host's; the device's reference in the tests).
GC_HD bf16_t bf16_from_float_portable(float f) {
  uint32_t u = float_bits(f);
  if (is_nan_bits32(u)) return bf16_t{0x7fc0};
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest, ties to even; carries into the exponent
  return bf16_t{uint16_t(u >> 16)};
}

GC_HD bf16_t bf16_from_float(float f) {
#if GATECHECK_DEVICE_CVT
  // One cvt in place of the integer rounding: the bf16 kernels' largest
  // integer cost (the forward is partly issue-bound on the H200, docs/kernel-design.md).
  if (is_nan_bits32(float_bits(f))) return bf16_t{0x7fc0};
  return cvt_rn<bf16_t>(f);
#else
  return bf16_from_float_portable(f);
#endif
}

// ---- fp16 -------------------------------------------------------------------
GC_HD float to_float(f16_t v) {
#if defined(__CUDA_ARCH__)
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v.bits));
  return f;
#else
  const uint32_t sign = uint32_t(v.bits & 0x8000u) << 16;
  const uint32_t exp = (v.bits >> 10) & 0x1fu;
  uint32_t mant = v.bits & 0x3ffu;
  if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (mant << 13));  // Inf / NaN
  if (exp != 0) return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
  if (mant == 0) return bits_float(sign);
  // subnormal: mant * 2^-24, exact in fp32
  int e = 113;
  while ((mant & 0x400u) == 0) { mant <<= 1; --e; }
  return bits_float(sign | (uint32_t(e) << 23) | ((mant & 0x3ffu) << 13));
#endif
}

// The portable rounding (the host's; the device's reference in the tests).
GC_HD f16_t f16_from_float_portable(float f) {
  const uint32_t x = float_bits(f);
  const uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return f16_t{0x7e00u};  // NaN: canonical, unsigned
  const uint16_t sign = uint16_t((x >> 16) & 0x8000u);
  if (ax >= 0x477ff000u) return f16_t{uint16_t(sign | 0x7c00u)};  // >= 65520 rounds to Inf
  if (ax >= 0x38800000u) {                                        // normal half
    uint32_t r = ax + 0x0fffu + ((ax >> 13) & 1u);
    r -= (127u - 15u) << 23;
    return f16_t{uint16_t(sign | (r >> 13))};
  }
  if (ax <= 0x33000000u) return f16_t{sign};  // <= 2^-25 (a tie) rounds to zero
  // subnormal half: value / 2^-24, rounded to nearest even
  const uint32_t mant = (ax & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126u - (ax >> 23);
  uint32_t q = mant >> shift;
  const uint32_t rem = mant & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (q & 1u))) ++q;
  return f16_t{uint16_t(sign | q)};
}

GC_HD f16_t f16_from_float(float f) {
#if GATECHECK_DEVICE_CVT
  if (is_nan_bits32(float_bits(f))) return f16_t{0x7e00u};  // NaN: canonical, unsigned
  return cvt_rn<f16_t>(f);
#else
  return f16_from_float_portable(f);
#endif
}

// ---- fp32 -------------------------------------------------------------------
GC_HD float to_float(float v) { return v; }
GC_HD float f32_canonical(float f) {
  return is_nan_bits32(float_bits(f)) ? bits_float(0x7fc00000u) : f;
}

// round_to<T>(x): the one rounding from an fp32 value into storage type T.
template <class T> GC_HD T round_to(float x);
template <> GC_HD float round_to<float>(float x) { return f32_canonical(x); }
template <> GC_HD bf16_t round_to<bf16_t>(float x) { return bf16_from_float(x); }
template <> GC_HD f16_t round_to<f16_t>(float x) { return f16_from_float(x); }

// round_inner<T>(x): round_to<T> for a value that only feeds more arithmetic
// and then a final round_to (the forward's rounded product). Same bits for
// every non-NaN value; a NaN may keep the hardware's payload, which the final
// rounding canonicalises anyway, so the device skips the NaN test here (0.4-0.5
// us off the bf16 forward at 4097 x 3072 on the H200, docs/kernel-design.md).
template <class T>
GC_HD T round_inner(float x) {
#if GATECHECK_DEVICE_CVT
  if constexpr (std::is_same<T, float>::value) return x;
  else return cvt_rn<T>(x);
#else
  return round_to<T>(x);
#endif
}

// Arithmetic with exactly one rounding and no FMA contraction. Host code is
// also built with -ffp-contract=off; the intrinsics pin the device side.
GC_HD float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
GC_HD float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

// Host-side helpers for harness code that works on raw bits of any dtype.
inline int dtype_size(DType t) { return t == DType::f32 ? 4 : 2; }
inline const char* dtype_name(DType t) {
  return t == DType::f32 ? "f32" : t == DType::f16 ? "f16" : "bf16";
}
bool parse_dtype(const char* name, DType* out);  // "f32"/"fp32"/"float32", "f16", "bf16"

// Calls f(T{}) with T the storage type of dtype t (float, f16_t or bf16_t), so
// that one generic lambda serves every dtype. A code that names no dtype calls
// nothing and returns false: callers check the dtype first (check_problem names
// a bad one in its error).
template <class F>
bool dispatch_dtype(DType t, F&& f) {
  switch (t) {
    case DType::f32: f(float{}); return true;
    case DType::f16: f(f16_t{}); return true;
    case DType::bf16: f(bf16_t{}); return true;
  }
  return false;
}

// bits <-> float for one element of the given dtype (16-bit types in the low bits)
inline float bits_to_float(DType t, uint32_t bits) {
  switch (t) {
    case DType::f32: return bits_float(bits);
    case DType::f16: return to_float(f16_t{uint16_t(bits)});
    default: return to_float(bf16_t{uint16_t(bits)});
  }
}
inline uint32_t float_to_bits_rn(DType t, float x) {
  switch (t) {
    case DType::f32: return float_bits(round_to<float>(x));
    case DType::f16: return round_to<f16_t>(x).bits;
    default: return round_to<bf16_t>(x).bits;
  }
}

}  // namespace gatecheck
