// rmsnorm_modulate's contract: RMSNorm with AdaLN modulation, described as
// data in rmsnorm_modulate_schema.cpp (op_schema.h says what a schema holds;
// its generic checks, check_call, are the whole contract: shapes, dim >= 1,
// eps > 0 and finite, every index in [0, gates)).
//
//   rstd[r] = 1/sqrt(mean_j x[r,j]^2 + eps)                        (fp32)
//   n       = RN(w * (rstd * x));  f = RN(1 + scale[index])
//   out     = RN(RN(n * f) + shift[index])
//   d = g * f;  dx = rstd w d - x rstd^3 sum_j(w d x) / dim;  dweight = sum_r d x rstd;
//   dshift[k] = sum over rows with index k of g;  dscale[k] = the same of g * n
// (the host twin and the CUDA kernels fuse the last product of each of
// dx, sum_j(w d x), dweight and dscale with its add or subtraction: one
// rounding where there were two)
// The orders of these sums, which the host twin and the CUDA kernels share,
// are in rmsnorm_modulate_order.h: a row's statistics in an order fixed by
// dim alone (batch invariant), dshift and dscale per gate over its rows in
// batch order (segment invariant), every sum in fp32 and repeatable.
//
// A row whose fp32 sum of squares (or mean square plus eps) overflows: an
// implementation that does not scale the row gets rstd = 1/sqrt(Inf) = +0,
// and must then give out = shift[index] exactly (a zero of either sign where
// shift is one), dx = +-0, and +-0 as the row's terms of dweight and dscale;
// each of these may instead be NaN where a product of its other factors
// (w x; w d, c or 2x; g f x) overflows before meeting rstd (Inf * 0).
// dshift does not see rstd. An implementation that scales the row gives the
// normalised values within the oracle's usual bounds instead. Either outcome
// is correct, row by row, and so is either where the sum overflows in some
// summation orders but not all. docs/oracle.md derives where a sum may, and
// where it must, overflow, and how the oracle judges both outcomes.
#pragma once

#include "op_schema.h"

namespace gatecheck {

const OpSchema& rmsnorm_modulate_schema();

}  // namespace gatecheck
