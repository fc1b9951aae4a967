// The values of a scale-tier case (scale_case.h): each element is a pure
// function of (value seed, tensor, position in the ORIGINAL generated case),
// so a case of 2^31 elements costs no host memory to describe, is generated on
// the device in one pass, replays from its spec alone, and any element (or a
// gate's whole sum) can be recomputed anywhere from its position. Written once
// for host and device (GC_HD).
//
// Three kinds:
//  - exact: k * 2^-m with integer |k| <= bound. exact_value_bound()
//    (scale_case.h) derives the bound that makes every output exact by
//    construction, so a correct implementation's outputs are known bit for bit.
//  - rounding: full-mantissa values in +-[2^-6, 4): every sum rounds, so an
//    order of accumulation shows in the bits (what repeatability and the
//    invariance properties need; exact values would hide every order bug).
//  - cancelling: like rounding, but a third of the op's row factor (y; x) is
//    +-2^12: large terms cancel in the sums over rows and the small ones
//    decide the result, so an order change of the fp32 sum survives even
//    bf16's final rounding.
#pragma once

#include <cstdint>

#include "../kernels/gate_residual_dtype.h"

namespace gatecheck {

enum class ScaleValues : int32_t { exact = 0, rounding = 1, cancelling = 2 };

// The tensors whose values are generated (the salt of their hash): float
// input k of the op (Case::inputs) is tensor k + 1. gate_residual's names
// are kept for its own code (its exact values, oracles/exact_expected.h).
enum ScaleTensor : uint32_t { kScaleRes = 1, kScaleGate = 2, kScaleY = 3, kScaleGradOut = 4 };
inline constexpr uint32_t scale_tensor_of_input(size_t float_input) { return uint32_t(float_input + 1); }

// Plain data, copied to the device by value.
struct ValueRule {
  uint64_t seed = 0;
  int32_t kind = int32_t(ScaleValues::rounding);
  int32_t bound = 0;      // exact: |k| <= bound
  int32_t frac_bits = 0;  // exact: values are k * 2^-frac_bits
  uint32_t cancel_tensor = kScaleY;  // cancelling: the tensor whose third is +-2^12 (the op's row factor)
};

// splitmix64's finaliser: neighbouring positions get unrelated values.
GC_HD uint64_t scale_mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

GC_HD uint64_t scale_hash(uint64_t seed, uint32_t tensor, uint64_t pos) {
  return scale_mix(pos ^ scale_mix(seed + 0x51ed270b27d1f5c9ull * uint64_t(tensor)));
}

// exact: the integer k of element `pos` of `tensor`, in [-bound, bound].
GC_HD int32_t scale_exact_k(const ValueRule& r, uint32_t tensor, uint64_t pos) {
  return int32_t(scale_hash(r.seed, tensor, pos) % uint64_t(2 * r.bound + 1)) - r.bound;
}

// 2^-m as a float, exactly (m in [0, 30]).
GC_HD float scale_pow2_neg(int32_t m) { return bits_float(uint32_t(127 - m) << 23); }

// The value before rounding to the dtype (exact values are representable).
GC_HD float scale_value(const ValueRule& r, uint32_t tensor, uint64_t pos) {
  if (r.kind == int32_t(ScaleValues::exact))
    return float(scale_exact_k(r, tensor, pos)) * scale_pow2_neg(r.frac_bits);
  const uint64_t h = scale_hash(r.seed, tensor, pos);
  if (r.kind == int32_t(ScaleValues::cancelling) && tensor == r.cancel_tensor && (h >> 60) % 3 == 0)
    return (h & 1) ? 4096.0f : -4096.0f;
  // sign, an exponent in [-6, 1] and 23 random mantissa bits
  const uint32_t sign = uint32_t(h >> 63) << 31;
  const uint32_t exp = uint32_t(127 - 6 + int((h >> 23) & 7)) << 23;
  return bits_float(sign | exp | uint32_t(h & 0x7fffffu));
}

// The element's bits in dtype `t` (16-bit types in the low bits).
GC_HD uint32_t scale_round_bits(DType t, float v) {
  switch (t) {
    case DType::f32: return float_bits(round_to<float>(v));
    case DType::f16: return round_to<f16_t>(v).bits;
    default: return round_to<bf16_t>(v).bits;
  }
}
GC_HD uint32_t scale_bits(DType t, const ValueRule& r, uint32_t tensor, uint64_t pos) {
  return scale_round_bits(t, scale_value(r, tensor, pos));
}

}  // namespace gatecheck
