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
// The orders of these sums, which the host twin and the CUDA kernels share,
// are in rmsnorm_modulate_order.h: a row's statistics in an order fixed by
// dim alone (batch invariant), dshift and dscale per gate over its rows in
// batch order (segment invariant), every sum in fp32 and repeatable.
#pragma once

#include "op_schema.h"

namespace gatecheck {

const OpSchema& rmsnorm_modulate_schema();

}  // namespace gatecheck
