// What a correct implementation must produce, bit for bit, on exact values
// (case/scale_values.h: k * 2^-m with |k| within exact_value_bound()). Every
// product and every fp32 partial sum is then exact, so each output is one
// rounding of an exact value computed here in integers: no float64 copy and no
// bound, and the device can check every element (harness/scale_device.cu).
// Written for host and device (GC_HD). Signed zeros follow IEEE as the
// oracle's SEMANTICS.md does: inputs k = 0 are +0; a product with a negative
// factor and a +0 factor is -0.
#pragma once

#include <cstdint>

#include "../case/scale_values.h"

namespace gatecheck {

// units * 2^-shift in dtype t, rounded once (|units| <= 2^24, so the float is exact).
GC_HD uint32_t exact_units_bits(DType t, int64_t units, int32_t shift) {
  return scale_round_bits(t, float(units) * scale_pow2_neg(shift));
}

// out = res + gate*y: exact in t (k_res*2^m + k_gate*k_y <= 2^p units of 2^-2m).
// Zero only as +0: res is never -0, and +0 + -0 is +0.
GC_HD uint32_t exact_out_bits(DType t, const ValueRule& r, uint64_t pos, uint64_t gate_pos) {
  const int64_t units = int64_t(scale_exact_k(r, kScaleRes, pos)) * (int64_t(1) << r.frac_bits) +
                        int64_t(scale_exact_k(r, kScaleGate, gate_pos)) * scale_exact_k(r, kScaleY, pos);
  return exact_units_bits(t, units, 2 * r.frac_bits);
}

// grad_y = g*gate: exact; -0 when one factor is +0 and the other negative.
GC_HD uint32_t exact_grad_y_bits(DType t, const ValueRule& r, uint64_t pos, uint64_t gate_pos) {
  const int32_t kg = scale_exact_k(r, kScaleGradOut, pos), kgate = scale_exact_k(r, kScaleGate, gate_pos);
  const uint32_t bits = exact_units_bits(t, int64_t(kg) * kgate, 2 * r.frac_bits);
  if (kg * kgate == 0 && (kg < 0 || kgate < 0)) return bits | (t == DType::f32 ? 0x80000000u : 0x8000u);
  return bits;
}

// grad_res = g, bit for bit.
GC_HD uint32_t exact_grad_res_bits(DType t, const ValueRule& r, uint64_t pos) {
  return scale_bits(t, r, kScaleGradOut, pos);
}

// One grad_gate term g*y, in units of 2^-2m.
GC_HD int64_t exact_term_units(const ValueRule& r, uint64_t pos) {
  return int64_t(scale_exact_k(r, kScaleGradOut, pos)) * scale_exact_k(r, kScaleY, pos);
}

// grad_gate = RN_T(exact sum). Either zero when every term is +-0 (the sign
// then depends on the order); +0 when terms cancel exactly or there are none.
struct ExactGateExpect {
  uint32_t bits, alt_bits;  // alt_bits == bits unless either zero is right
};
GC_HD ExactGateExpect exact_grad_gate_bits(DType t, int32_t frac_bits, int64_t sum_units, bool any_term,
                                           bool any_nonzero_term) {
  const uint32_t bits = exact_units_bits(t, sum_units, 2 * frac_bits);
  if (any_term && !any_nonzero_term) return {bits, bits | (t == DType::f32 ? 0x80000000u : 0x8000u)};
  return {bits, bits};
}

}  // namespace gatecheck
