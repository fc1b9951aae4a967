// An rmsnorm_modulate case whose plain part (RMSNorm) is exact in every
// reduction order, so that a host-made reference can be bit for bit: each x
// is +1 or -1 (the sum of squares is dim exactly), eps is 3 (mean + eps
// rounds to 4 whatever the division's rounding, so rstd = 1/sqrt(4) = 0.5),
// and each w is a short-mantissa value, so n = w * x * 0.5 exactly, with the
// zero signs of w * x. Shift and scale are not zero: plain_case zeroes them.
#pragma once

#include <cmath>

#include "case/case.h"
#include "case/prng.h"
#include "kernels/rmsnorm_modulate.h"

namespace gatecheck::plain_test {

inline Case exact_case(DType t, int64_t rows, int64_t dim, uint64_t seed) {
  const OpSchema& op = rmsnorm_modulate_schema();
  Case c = make_case(op, t, rows, dim, /*gates=*/3);
  Prng g(seed);
  for (int64_t r = 0; r < rows; ++r) c.index[size_t(r)] = int64_t(g.next() % 3);
  HostTensor& x = c.input("x");
  for (int64_t i = 0; i < x.numel(); ++i) x.set_value_rn(i, g.next() % 2 ? 1.0f : -1.0f);
  HostTensor& w = c.input("w");
  for (int64_t j = 0; j < dim; ++j) {
    const uint64_t u = g.next();
    // +-(1 + k/8) 2^e, e in [-4, 4]; every 7th a zero of either sign
    float v = j % 7 == 3 ? 0.0f : std::ldexp(1.0f + float(u % 8) / 8, int((u >> 3) % 9) - 4);
    if ((u >> 8) & 1) v = -v;
    w.set_value_rn(j, v);
  }
  for (const char* m : {"shift", "scale"}) {
    HostTensor& s = c.input(m);
    for (int64_t i = 0; i < s.numel(); ++i) s.set_value_rn(i, float(int64_t(g.next() % 33) - 16) / 64);
  }
  c.scalars[size_t(op.scalar_index("eps"))] = 3.0;
  return c;
}

// Its plain part, n = w * x * 0.5, made on the host from the case alone.
inline HostTensor exact_plain(const Case& c) {
  const HostTensor &x = c.input("x"), &w = c.input("w");
  HostTensor n(c.dtype, c.rows, c.dim);
  for (int64_t r = 0; r < c.rows; ++r)
    for (int64_t j = 0; j < c.dim; ++j)
      n.set_value_rn(r * c.dim + j, w.value(j) * (0.5f * x.value(r * c.dim + j)));
  return n;
}

}  // namespace gatecheck::plain_test
