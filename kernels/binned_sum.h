// A reproducible sum of fp32 terms in 4 int64 words, for host and device:
// gate_residual's reproducible grad_gate (issue 35). The same words for every
// order of the terms and every split of them into parts, however the parts'
// states are combined; one rounding to the dtype at the end.
//
// Binned, as ReproBLAS, with integer digits. A finite term is an integer
// sig * 2^pos in units of 2^-149 (sig < 2^24); absolute bins of 32 bits
// (bin b holds units [2^(32b), 2^(32b+32))) cut it into two shares below
// 2^32, in bins pos/32 and pos/32 + 1 (its "top bin"). A state keeps:
//   w[0], w[1], w[2]  the exact integer sums of the shares in bins I, I-1,
//                     I-2 (signed; no carries between them, ever);
//   w[3]              I (bits 0-7: the largest top bin of any term, 0 for
//                     none), then saturating counts (at most 255) of NaN
//                     (bits 16-31), +Inf (32-47) and -Inf (48-63) terms.
// Shares in bins below I-2 are dropped. Because the bins are absolute and
// the kept window is set by the largest term alone, a part's own I is at
// most the whole batch's, so each part keeps every bin the whole batch
// keeps (and maybe more): combining aligns two states to the larger I,
// drops what falls out of that window, and adds digits and counts. The
// result is a function of the multiset of terms: the same for every split
// and every combine order. A term's digit add is a few integer operations on
// registers (no carries, no atomics), which the hot loop of a GPU tile
// kernel can afford; the 6-word exact_sum.h (plain integer SUM, correctly
// rounded) needed normalisations and a run-time word index.
//
// Combine: not a plain integer SUM. An all-reduce does MAX of I first, then
// each rank aligns its state to it (binned_align), then SUM of w[0..2] and of
// w[3]'s counts (a raw SUM of up to 257 canonical states fits their 16-bit
// fields; finish reads only whether a count is non-zero).
//
// Exact while a state's terms number below 2^31 (a digit sums shares below
// 2^32). Accuracy: the max term is kept whole; a dropped share lies below
// 2^-32 of the largest |term|, so the finished value is within
// n * 2^-32 * max|term| of the exact sum before its one rounding to nearest
// even (inside Higham's fp32 bound gamma_(n-1) * sum|terms| for n >= 2, and
// exact for one term). Not correctly rounded in general: it is the correctly
// rounded sum of the kept shares, which is the exact sum's whenever every
// term keeps all its bits (e.g. no |term| below 2^-40 of the largest). NaN if any term is NaN or both
// infinities occur, else the infinity that occurs; a zero sum is +0.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "exact_sum.h"
#include "gate_residual_dtype.h"

namespace gatecheck {

constexpr int kBinnedWords = 4;
constexpr int kBinBits = 32;
constexpr uint32_t kBinnedMaxCount = 255;  // per kind of special term, in a state

// The three bins I, I-1, I-2 after I rises by s (>= 1): digits move down;
// those leaving the window drop.
template <class D>
GC_HD void binned_shift_window(uint32_t s, D& b0, D& b1, D& b2) {
  b2 = s == 1 ? b1 : s == 2 ? b0 : D(0);
  b1 = s == 1 ? b0 : D(0);
  b0 = D(0);
}

// A NaN or infinity term counted in its field of `special` (NaN | +Inf << 8 |
// -Inf << 16), each count held at kBinnedMaxCount.
GC_HD void binned_count_special(uint32_t& special, uint32_t u) {
  const int field = (u & 0x7fffffu) ? 0 : (u >> 31) ? 16 : 8;
  if (((special >> field) & 0xffu) < kBinnedMaxCount) special += 1u << field;
}

// A state in registers. Words: to_words / from_words.
struct BinnedSum {
  int64_t d0, d1, d2;  // bins I, I-1, I-2
  uint32_t top;        // I
  uint32_t special;    // NaN | +Inf << 8 | -Inf << 16, each at most kBinnedMaxCount

  GC_HD void clear() {
    d0 = d1 = d2 = 0;
    top = 0;
    special = 0;
  }

  // Raises I to t (> I): digits move down; those leaving the window drop.
  GC_HD void raise_top(uint32_t t) {
    binned_shift_window(t - top, d0, d1, d2);
    top = t;
  }

  GC_HD void add_special(uint32_t u) { binned_count_special(special, u); }

  // Adds one fp32 term (its bits u).
  GC_HD void add_bits(uint32_t u) {
    const uint32_t e = (u >> 23) & 0xffu;
    const uint32_t pos = e ? e - 1 : 0;  // value = sig * 2^(pos - 149)
    const uint32_t hb = (pos >> 5) + 1;  // the term's top bin
    if (e == 0xffu || hb > top) {        // rare once the largest terms are in
      if (e == 0xffu) {
        add_special(u);
        return;
      }
      raise_top(hb);
    }
    const uint32_t sig = (u & 0x7fffffu) | (e ? 0x800000u : 0u);
    const uint32_t off = pos & 31u;
    const uint32_t lo = sig << off;  // share in bin hb - 1
#ifdef __CUDA_ARCH__
    const uint32_t hi = __funnelshift_l(sig, 0u, off);  // share in bin hb
#else
    const uint32_t hi = off ? sig >> (32 - off) : 0u;
#endif
    const uint32_t s = top - hb;  // hi's digit; lo goes to s + 1
    const int64_t m = -int64_t(u >> 31);
    const int64_t L = (int64_t(lo) ^ m) - m, H = (int64_t(hi) ^ m) - m;
    d0 += s == 0 ? H : 0;
    d1 += s == 0 ? L : s == 1 ? H : 0;
    d2 += s == 1 ? L : s == 2 ? H : 0;
  }
  GC_HD void add(float t) { add_bits(float_bits(t)); }

  // this += o: aligned to the larger I; counts saturate.
  GC_HD void merge(const BinnedSum& o) {
    BinnedSum b = o;
    if (b.top > top) raise_top(b.top);
    else if (top > b.top) b.raise_top(top);
    d0 += b.d0;
    d1 += b.d1;
    d2 += b.d2;
    uint32_t sp = 0;
    for (int f = 0; f < 24; f += 8) {
      const uint32_t n = ((special >> f) & 0xffu) + ((b.special >> f) & 0xffu);
      sp |= (n < kBinnedMaxCount ? n : kBinnedMaxCount) << f;
    }
    special = sp;
  }

  GC_HD void to_words(uint64_t* w) const {
    w[0] = uint64_t(d0);
    w[1] = uint64_t(d1);
    w[2] = uint64_t(d2);
    w[3] = uint64_t(top) | uint64_t(special & 0xffu) << 16 | uint64_t((special >> 8) & 0xffu) << 32 |
           uint64_t((special >> 16) & 0xffu) << 48;
  }
  // Reads a state's words (counts above kBinnedMaxCount, as a raw integer
  // all-reduce leaves them, saturate).
  GC_HD void from_words(const uint64_t* w) {
    d0 = int64_t(w[0]);
    d1 = int64_t(w[1]);
    d2 = int64_t(w[2]);
    top = uint32_t(w[3] & 0xffu);
    special = 0;
    for (int f = 0; f < 3; ++f) {
      const uint64_t n = (w[3] >> (16 + 16 * f)) & 0xffffu;
      special |= uint32_t(n < kBinnedMaxCount ? n : kBinnedMaxCount) << (8 * f);
    }
  }
};


// x + y rounded toward zero (the device's __dadd_rz; on the host from the
// round-to-nearest sum and its exact error, TwoSum).
GC_HD double binned_dadd_rz(double x, double y) {
#ifdef __CUDA_ARCH__
  return __dadd_rz(x, y);
#else
  const double s = x + y, bb = s - x, err = (x - (s - bb)) + (y - bb);
  if ((s > 0 && err < 0) || (s < 0 && err > 0)) return std::nextafter(s, 0.0);
  return s;
#endif
}

// 2^e as a double, for normal e.
GC_HD double binned_pow2(int e) {
  const uint64_t b = uint64_t(e + 1023) << 52;
#ifdef __CUDA_ARCH__
  return __longlong_as_double((long long)b);
#else
  double d;
  std::memcpy(&d, &b, sizeof d);
  return d;
#endif
}

// The same state, accumulated in fp64 for a GPU's hot loop: the fp64 pipe
// does the work (11 fp64 operations and a conversion a term) beside the
// integer one (a sign, and one compare against a bound kept with the top bin),
// where BinnedSum::add_bits takes about 40 integer operations.
// A term's three shares are taken from |t| exactly: q = RZ(r + C) - C with
// C = 2^52 * (the bin's unit) is r's part at or above that unit (r is below
// 2^32 units, so r + C stays in C's binade, where the spacing is one unit),
// and r - q passes on exactly. Each digit is kept as a value, the signed sum
// of its shares: exact while it stays below 2^53 units, that is for up to
// 2^21 terms (a tile has at most 256). to_words gives BinnedSum's words for
// the same terms (binned_sum_test checks the two on the host, where
// binned_dadd_rz emulates the device's rounding).
//
// The window's constants (c1, c2) and the raise test's bound are kept with
// the top bin: 5 registers, and about 8 fewer instructions a term than
// making them from the top bin each term.
struct BinnedFp64Sum {
  static constexpr int kMaxTerms = 1 << 21;
  double s0, s1, s2;  // bins I, I-1, I-2: signed sums of shares, as values
  double c0, c1, c2;  // 2^52 units of bins I, I-1, I-2
  uint32_t top, special;
  // |term bits| at or above this: a new top bin or a NaN or infinity. Top
  // bin 0 (empty): 0, every term.
  uint32_t raise_at;

  GC_HD static double c_of(int top) { return binned_pow2(52 + kBinBits * top - 149); }
  // A term of exponent field e has top bin ((e ? e - 1 : 0) >> 5) + 1, above
  // t (>= 1) exactly when e >= 32 t + 1.
  GC_HD void set_top(uint32_t t) {
    top = t;
    c0 = c_of(int(t));
    c1 = c_of(int(t) - 1);
    c2 = c_of(int(t) - 2);
    raise_at = t == 0 ? 0u : kBinBits * t + 1u >= 0xffu ? 0x7f800000u : (kBinBits * t + 1u) << 23;
  }
  GC_HD void clear() {
    s0 = s1 = s2 = 0.0;
    special = 0;
    set_top(0);
  }
  GC_HD void raise_top(uint32_t t) {
    binned_shift_window(t - top, s0, s1, s2);
    set_top(t);
  }
  GC_HD void add_special(uint32_t u) { binned_count_special(special, u); }
  // Whether the term of bits u needs the slow path: a new top bin, or a NaN or infinity.
  GC_HD bool needs_slow(uint32_t u) const { return (u & 0x7fffffffu) >= raise_at; }
  // The slow path: true when the term is counted as special (nothing more to add).
  GC_HD bool slow(uint32_t u) {
    const uint32_t e = (u >> 23) & 0xffu;
    if (e == 0xffu) {
      add_special(u);
      return true;
    }
    const uint32_t hb = ((e ? e - 1 : 0) >> 5) + 1;  // the term's top bin, as BinnedSum
    if (hb > top) raise_top(hb);
    return false;
  }
  // A term of bits u whose top bin is at most I, finite.
  GC_HD void add_in_window(float t, uint32_t u) {
    const double a = std::fabs(double(t));  // exact
    const double q0 = binned_dadd_rz(a, c0) - c0, r1 = a - q0;
    const double q1 = binned_dadd_rz(r1, c1) - c1, r2 = r1 - q1;
    const double q2 = binned_dadd_rz(r2, c2) - c2;
    const double sg = (u >> 31) ? -1.0 : 1.0;
    s0 = std::fma(sg, q0, s0);  // exact: multiples of the bin's unit, below 2^53 of them
    s1 = std::fma(sg, q1, s1);
    s2 = std::fma(sg, q2, s2);
  }
  GC_HD void add(float t) {
    const uint32_t u = float_bits(t);
    if (needs_slow(u) && slow(u)) return;  // rare once the largest terms are in
    add_in_window(t, u);
  }
  // BinnedSum's words: each digit in units of its bin (an exact integer).
  GC_HD void to_words(uint64_t* w) const {
    BinnedSum b;
    b.top = top;
    b.special = special;
    b.d0 = digit(s0, 0);
    b.d1 = digit(s1, 1);
    b.d2 = digit(s2, 2);
    b.to_words(w);
  }
  GC_HD int64_t digit(double s, int k) const {
    const int bin = int(top) - k;
    return bin < -1 ? 0 : int64_t(s * binned_pow2(149 - kBinBits * bin));
  }
};


GC_HD BinnedSum binned_empty() {
  BinnedSum s;
  s.clear();
  return s;
}

// acc += s on words (the combine of two states).
GC_HD void binned_combine(uint64_t* acc, const uint64_t* s) {
  BinnedSum a, b;
  a.from_words(acc);
  b.from_words(s);
  a.merge(b);
  a.to_words(acc);
}

// out = n states of `words` words each, combined element by element (any
// order gives the same words; out may be one of the states). On the host.
// An element's n states merge in registers and are written once: the words
// of binned_combine's round trips, at a third of its work.
inline void binned_combine_states(int64_t words, const uint64_t* const* states, int32_t n, uint64_t* out) {
  for (int64_t e = 0; e < words; e += kBinnedWords) {
    BinnedSum acc = binned_empty(), b;
    for (int32_t i = 0; i < n; ++i) {
      b.from_words(states[i] + e);
      acc.merge(b);
    }
    acc.to_words(out + e);  // every state's element e is read by now
  }
}

// A state aligned to a larger I (the all-reduce's step between MAX and SUM).
GC_HD void binned_align(uint64_t* w, uint32_t top) {
  BinnedSum a;
  a.from_words(w);
  if (top > a.top) a.raise_top(top);
  a.to_words(w);
}

// The sum rounded once to nearest even to a format (exact_sum_round_fp32_bits'
// arguments), as fp32 bits.
GC_HD uint32_t binned_round_fp32_bits(const BinnedSum& s, int precision, int emin, int emax) {
  const uint32_t nan = s.special & 0xffu, pinf = (s.special >> 8) & 0xffu, ninf = (s.special >> 16) & 0xffu;
  if (nan || (pinf && ninf)) return 0x7fc00000u;
  if (pinf) return 0x7f800000u;
  if (ninf) return 0xff800000u;
  uint64_t L[5] = {0, 0, 0, 0, 0};
  const int64_t d[3] = {s.d0, s.d1, s.d2};
  for (int k = 0; k < 3; ++k)  // bins below 0 hold nothing
    if (int(s.top) - k >= 0 && d[k]) exact_sum_detail::add_at(L, uint64_t(d[k]), kBinBits * (int(s.top) - k), true);
  return exact_sum_detail::round_limbs_fp32_bits(L, precision, emin, emax);
}

template <class T>
GC_HD T binned_finish(const BinnedSum& s) {
  uint32_t b;
  if (std::is_same<T, float>::value) b = binned_round_fp32_bits(s, 24, -126, 127);
  else if (std::is_same<T, f16_t>::value) b = binned_round_fp32_bits(s, 11, -14, 15);
  else b = binned_round_fp32_bits(s, 8, -126, 127);
  return round_to<T>(bits_float(b));  // exact: the value is T's
}
template <class T>
GC_HD T binned_finish_words(const uint64_t* w) {
  BinnedSum s;
  s.from_words(w);
  return binned_finish<T>(s);
}

}  // namespace gatecheck
