// Binned states (binned_sum.h) summed by integer adds alone, for host and
// device: the way a GPU kernel whose threads each hold a partial state of some
// of an element's terms (a run of rows) puts them together with integer
// atomics, in any order, without knowing the element's final top bin.
//
// A wide sum keeps every bin a finite fp32 term's shares can fall in (0 to
// kBinnedWideBins - 1), the largest top bin I seen, and the special counts.
// A partial state of top I_p adds its digits to bins I_p, I_p - 1, I_p - 2.
// Since I_p <= I, every share in bins I, I-1, I-2 lies at or above I_p - 2 in
// its part, so it was kept there and is added here; what else the wide sum
// holds lies below I - 2, and binned_wide_words drops it, as a combine would.
// The words are thus the state of all the terms: the same as BinnedSum over
// them, for every cut into parts and every order of the adds.
#pragma once

#include <cstdint>

#include "binned_sum.h"

namespace gatecheck {

// Bins 0 to (253 >> 5) + 1: the top bin of fp32's largest finite exponent.
constexpr int kBinnedWideBins = (253 >> 5) + 2;

// The adds a partial state's words v make to a wide sum, through ops:
// ops.max_top(I), ops.add_bin(bin, digit) (an int64 as two's-complement
// bits: integer adds wrap alike), ops.add_count(kind, n) (0 NaN, 1 +Inf,
// 2 -Inf). Nothing for zero digits and counts.
template <class Ops>
GC_HD void binned_wide_add(const uint64_t* v, Ops& ops) {
  const int top = int(v[3] & 0xffu);
  if (top) {  // no finite term: no digits
    ops.max_top(uint32_t(top));
    for (int k = 0; k < 3; ++k)
      if (top - k >= 0 && v[k]) ops.add_bin(top - k, v[k]);
  }
  for (int f = 0; f < 3; ++f) {
    const uint32_t n = uint32_t((v[3] >> (16 + 16 * f)) & 0xffffu);
    if (n) ops.add_count(f, n);
  }
}

// The state's words of a wide sum: bins I, I-1, I-2 of its top I, each
// count held at kBinnedMaxCount. bin(b) reads bin b's digit.
template <class BinAt>
GC_HD void binned_wide_words(uint32_t top, BinAt bin, const uint32_t (&count)[3], uint64_t* w) {
  BinnedSum s;
  s.clear();
  s.top = top;
  if (top) {
    s.d0 = int64_t(bin(int(top)));
    s.d1 = int64_t(bin(int(top) - 1));
    s.d2 = top >= 2 ? int64_t(bin(int(top) - 2)) : 0;
  }
  for (int f = 0; f < 3; ++f)
    s.special |= (count[f] < kBinnedMaxCount ? count[f] : kBinnedMaxCount) << (8 * f);
  s.to_words(w);
}

// One element's wide sum in memory of its own (the host's, and the tests').
struct BinnedWide {
  uint64_t bin[kBinnedWideBins] = {};
  uint32_t top = 0;
  uint32_t count[3] = {0, 0, 0};

  GC_HD void max_top(uint32_t t) { top = t > top ? t : top; }
  GC_HD void add_bin(int b, uint64_t d) { bin[b] += d; }
  GC_HD void add_count(int f, uint32_t n) { count[f] += n; }
  GC_HD void add(const uint64_t* v) { binned_wide_add(v, *this); }
  GC_HD void to_words(uint64_t* w) const {
    binned_wide_words(top, [this](int b) { return bin[b]; }, count, w);
  }
};

}  // namespace gatecheck
