// An exact, order-independent sum of fp32 terms, for host and device: the
// reproducible mode of a reduction over rows (issue 35). Each output element
// keeps kExactSumWords 64-bit words; a term adds its exact value to them, and
// two states combine by adding them word by word as integers, so the result
// is the same for every order of the terms and every split of them into
// parts, however the parts' states are summed (an integer all-reduce SUM of
// the words is such a combine).
//
// The words of one element:
//   w[0..3]  unsigned digits of radix 2^56 (normalised: in [0, 2^56));
//   w[4]     the top digit, signed, of weight 2^(4*56);
//   w[5]     counts of special terms: NaN (bits 0-20), +Inf (21-41), -Inf (42-62).
// The value is sum(w[i] * 2^(56 i)) * 2^-149: 2^-149 is fp32's smallest
// subnormal, so every finite fp32 term (at most 2^128, whose bits reach
// 2^277 * 2^-149) is held exactly. A finite term touches two digits.
//
// Exact while (a) the top digit does not wrap: the sum of |terms| stays below
// 2^138, about 2^10 times fp32's largest value; (b) a lower digit does not
// overflow: a state adds at most kExactSumNormaliseEvery terms between
// normalisations, and at most kExactSumMaxStates normalised states are summed
// word by word before the next normalisation (combine() normalises; a raw
// integer all-reduce of more ranks must be done in steps); (c) fewer than
// 2^21 special terms of each kind. The finish rounds the exact value once,
// to nearest even, to the output dtype: correctly rounded (no fp32
// intermediate); NaN if any term is NaN or both infinities occur, else the
// infinity that occurs; an exactly zero sum is +0.
#pragma once

#include <cstdint>

#include "gate_residual_dtype.h"

namespace gatecheck {

constexpr int kExactSumWords = 6;
constexpr int kExactSumDigitBits = 56;
constexpr int kExactSumNormaliseEvery = 64;  // terms; digits then stay within int64
constexpr int kExactSumMaxStates = 127;      // normalised states per word-wise sum

namespace exact_sum_detail {
constexpr uint64_t kDigitMask = (uint64_t(1) << kExactSumDigitBits) - 1;
constexpr uint64_t kCountMask = (uint64_t(1) << 21) - 1;
constexpr uint64_t kNan = 1, kPosInf = uint64_t(1) << 21, kNegInf = uint64_t(1) << 42;

// (uint64 arithmetic wraps; signed overflow would be undefined.)
GC_HD int64_t as_signed(uint64_t u) { return int64_t(u); }

// L (five 64-bit limbs, little-endian, two's complement) += v * 2^bit, v
// read as unsigned or (the top digit) as signed.
GC_HD void add_at(uint64_t* L, uint64_t v, int bit, bool is_signed) {
  const int limb = bit / 64, off = bit % 64;
  const uint64_t ext = is_signed && as_signed(v) < 0 ? ~uint64_t(0) : 0;  // the sign, extended
  const uint64_t lo = v << off;
  const uint64_t hi = !off ? ext : is_signed ? uint64_t(as_signed(v) >> (64 - off)) : v >> (64 - off);
  uint64_t carry = 0;
  for (int i = limb; i < 5; ++i) {
    const uint64_t add = i == limb ? lo : i == limb + 1 ? hi : ext;
    const uint64_t s = L[i] + add, t = s + carry;
    carry = uint64_t(s < add) | uint64_t(t < s);
    L[i] = t;
  }
}

GC_HD int highest_bit(uint64_t v) {
  int h = -1;
  while (v) {
    ++h;
    v >>= 1;
  }
  return h;
}

// kept * 2^q as fp32 bits, for kept < 2^25 and a value fp32 represents.
GC_HD uint32_t fp32_bits_of(uint64_t kept, int q) {
  if (kept == 0) return 0;
  const int hb = highest_bit(kept), e = hb + q;
  if (e < -126) return uint32_t(kept << (q + 149));  // subnormal: q >= -149
  const uint64_t m = hb > 23 ? kept >> (hb - 23) : kept << (23 - hb);
  return (uint32_t(e + 127) << 23) | uint32_t(m & 0x7fffffu);
}
// L (five limbs, two's complement, units of 2^-149; its magnitude below
// 2^319) rounded once to nearest even to a format (see
// exact_sum_round_fp32_bits), as fp32 bits. L is overwritten.
GC_HD uint32_t round_limbs_fp32_bits(uint64_t* L, int precision, int emin, int emax) {
  const bool neg = (L[4] >> 63) != 0;
  if (neg) {  // magnitude: two's complement negation
    uint64_t carry = 1;
    for (int i = 0; i < 5; ++i) {
      L[i] = ~L[i] + carry;
      carry = carry && L[i] == 0;
    }
  }
  int h = -1;  // the highest set bit of the magnitude (units of 2^-149)
  for (int i = 4; i >= 0 && h < 0; --i)
    if (L[i]) h = 64 * i + highest_bit(L[i]);
  if (h < 0) return 0;  // an exact zero is +0
  const int e = h - 149;  // the value is in [2^e, 2^(e+1))
  const int q = (e > emin ? e : emin) - (precision - 1);  // the quantum at that exponent
  const int shift = q + 149;                              // bits below the quantum
  // shift >= 0: q is at least fp32's subnormal quantum 2^-149 for every format here.
  auto bit = [&](int b) { return (L[b / 64] >> (b % 64)) & 1u; };
  uint64_t kept = 0;  // at most precision + 1 bits
  for (int b = h; b >= shift; --b) kept = (kept << 1) | bit(b);
  if (shift > 0) {
    const int r = shift - 1;  // the round bit; bits below it are sticky
    bool sticky = false;
    for (int i = 0; i < r / 64; ++i) sticky = sticky || L[i] != 0;
    if (r % 64) sticky = sticky || (L[r / 64] & ((uint64_t(1) << (r % 64)) - 1)) != 0;
    if (bit(r) && (sticky || (kept & 1u))) ++kept;
  }
  const int top = highest_bit(kept) + q;
  const uint32_t sign = neg ? 0x80000000u : 0u;
  if (top > emax) return sign | 0x7f800000u;
  return sign | fp32_bits_of(kept, q);
}
}  // namespace exact_sum_detail

GC_HD void exact_sum_clear(uint64_t* w) {
  for (int i = 0; i < kExactSumWords; ++i) w[i] = 0;
}

// Carries each lower digit's excess into the next, leaving it in [0, 2^56).
// Keeps the value (modulo the top digit's wrap).
GC_HD void exact_sum_normalise(uint64_t* w) {
  using namespace exact_sum_detail;
  for (int i = 0; i < 4; ++i) {
    const int64_t carry = as_signed(w[i]) >> kExactSumDigitBits;  // arithmetic: floor division
    w[i] &= kDigitMask;
    w[i + 1] += uint64_t(carry);
  }
}

// The same for a state whose lower digits are sums of normalised digits that
// may pass 2^63 (a device's atomic sums, whose carries out of 64 bits have
// already been moved up: exact_sum_carry_out): they are read as unsigned.
GC_HD void exact_sum_normalise_unsigned(uint64_t* w) {
  for (int i = 0; i < 4; ++i) {
    const uint64_t carry = w[i] >> kExactSumDigitBits;
    w[i] &= exact_sum_detail::kDigitMask;
    w[i + 1] += carry;
  }
}

// A carry out of lower digit word i (2^64 of it) is 2^8 of word i + 1.
constexpr uint64_t kExactSumCarryOut = uint64_t(1) << (64 - kExactSumDigitBits);

// Adds a normalised state s into a shared state g through `add(word, v)`,
// which adds v to g[word] and returns the word's old value (an integer
// atomic on a device): the order of such adds does not matter. A carry out
// of a lower word's 64 bits moves up as kExactSumCarryOut of the next word;
// the top word wraps by design; read g with exact_sum_normalise_unsigned.
template <class AddReturningOld>
GC_HD void exact_sum_add_carrying(uint64_t* g, const uint64_t* s, AddReturningOld add) {
  for (int i = 0; i < 4; ++i) {
    uint64_t v = s[i];
    for (int k = i; v != 0; ++k) {
      const uint64_t old = add(g, k, v);
      if (k == 4 || old + v >= old) break;
      v = kExactSumCarryOut;
    }
  }
  if (s[4]) add(g, 4, s[4]);
  if (s[5]) add(g, 5, s[5]);
}

// Adds one fp32 term exactly. Call exact_sum_normalise at least every
// kExactSumNormaliseEvery terms.
GC_HD void exact_sum_add(uint64_t* w, float term) {
  using namespace exact_sum_detail;
  const uint32_t u = float_bits(term);
  const uint32_t e = (u >> 23) & 0xffu, m = u & 0x7fffffu;
  const bool neg = (u >> 31) != 0;
  if (e == 0xffu) {
    w[5] += m ? kNan : neg ? kNegInf : kPosInf;
    return;
  }
  const uint64_t sig = e ? (m | 0x800000u) : m;  // value = sig * 2^(pos - 149)
  if (sig == 0) return;
  const int pos = e ? int(e) - 1 : 0;
  const int word = pos / kExactSumDigitBits, off = pos % kExactSumDigitBits;
  const uint64_t lo = (sig << off) & kDigitMask;
  const uint64_t hi = sig >> (kExactSumDigitBits - off);  // 0 for the top digit (pos <= 253)
  if (neg) {
    w[word] -= lo;
    if (word < 4) w[word + 1] -= hi;
  } else {
    w[word] += lo;
    if (word < 4) w[word + 1] += hi;
  }
}

// acc += s, word by word: what an integer all-reduce SUM does. Normalise
// before more than kExactSumMaxStates normalised states have been summed.
GC_HD void exact_sum_combine(uint64_t* acc, const uint64_t* s) {
  for (int i = 0; i < kExactSumWords; ++i) acc[i] += s[i];
}

// The exact sum rounded once to nearest even to a format of `precision`
// significand bits, smallest normal exponent `emin` and largest `emax`,
// returned as fp32 bits (every such value is an fp32 value): f32 (24, -126,
// 127), bf16 (8, -126, 127), f16 (11, -14, 15). Reads any state (a sum of
// at most kExactSumMaxStates normalised ones).
GC_HD uint32_t exact_sum_round_fp32_bits(const uint64_t* state, int precision, int emin, int emax) {
  using namespace exact_sum_detail;
  uint64_t w[kExactSumWords];
  for (int i = 0; i < kExactSumWords; ++i) w[i] = state[i];
  exact_sum_normalise(w);
  const uint64_t nan = w[5] & kCountMask, pinf = (w[5] >> 21) & kCountMask, ninf = (w[5] >> 42) & kCountMask;
  if (nan || (pinf && ninf)) return 0x7fc00000u;
  if (pinf) return 0x7f800000u;
  if (ninf) return 0xff800000u;
  uint64_t L[5] = {0, 0, 0, 0, 0};
  for (int i = 0; i < 4; ++i) add_at(L, w[i], kExactSumDigitBits * i, false);  // now in [0, 2^56)
  add_at(L, w[4], 4 * kExactSumDigitBits, true);
  return round_limbs_fp32_bits(L, precision, emin, emax);
}

// The finish for a dtype T (float, f16_t, bf16_t): one rounding.
template <class T>
GC_HD T exact_sum_finish(const uint64_t* w) {
  uint32_t b;
  if (std::is_same<T, float>::value) b = exact_sum_round_fp32_bits(w, 24, -126, 127);
  else if (std::is_same<T, f16_t>::value) b = exact_sum_round_fp32_bits(w, 11, -14, 15);
  else b = exact_sum_round_fp32_bits(w, 8, -126, 127);
  return round_to<T>(bits_float(b));  // exact: the value is T's
}

}  // namespace gatecheck
