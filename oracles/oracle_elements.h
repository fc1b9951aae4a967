// The oracle's per-element expectations (derived in oracle_reference.cpp),
// for callers that judge a sample of a case rather than all of it
// (oracle_sampled.h). Each takes the exact input values as doubles.
#pragma once

#include <cstdint>
#include <limits>

#include "oracle.h"

namespace gatecheck {

Expected out_expected(DType t, double res, double gate, double y);
Expected grad_y_expected(DType t, double g, double gate);
Expected grad_res_expected(DType t, uint32_t g_bits);

// What the bound of one grad_gate element needs from its terms, gathered in
// row order (the float64 evaluation order) in one pass over the rows.
struct GateColumn {
  int64_t n = 0;
  double s = 0, S = 0;  // float64 sums of t_i and |t_i|
  double S_finite = 0;  // float64 sum of |t_i| over the finite terms
  double e_prod = 0;    // float64 sum of the fp32 product errors d_i
  int q = std::numeric_limits<int>::max();
  bool term_overflow = false;
  void add(double term);  // term = g*y, exact in float64
};
Expected grad_gate_expected(DType t, const GateColumn& c);

}  // namespace gatecheck
