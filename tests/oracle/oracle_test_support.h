// Cases and reference computations shared by the oracle tests: value classes
// that reach every corner of the bounds, the host twin as a correct
// implementation, and alternative correct (and deliberately wrong)
// evaluations to show the bounds pass and fail when they must.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/host/gate_residual_host.h"
#include "oracles/oracle.h"
#include "case/case.h"

namespace gatecheck::testing {

enum class Values {
  normal,         // N(0,1), gate scaled by 0.1
  small_int,      // integers in [-4, 4]: every result exact
  mixed,          // N(0,1) times 2^k over a wide exponent range
  subnormal,      // around and below the dtype's smallest normal
  near_overflow,  // products and sums near the dtype's largest value
  cancelling,     // large terms that cancel mixed with small ones
  specials,       // mostly normal, 3% NaN, +-Inf and +-0
};
const char* values_name(Values v);
constexpr Values kAllValues[] = {Values::normal,    Values::small_int,     Values::mixed,
                                 Values::subnormal, Values::near_overflow, Values::cancelling,
                                 Values::specials};
constexpr DType kAllDTypes[] = {DType::f32, DType::f16, DType::bf16};

// A random case; index uniform over gates unless one_gate.
Case random_case(DType t, int64_t rows, int64_t dim, int64_t gates, Values v, uint64_t seed);

// The host twin (a correct implementation) on a case; throws on a rejection.
Outputs run_host(const Case& c);

// Round a finite double to the nearest value of dtype t (ties to even), bits.
uint32_t round_double(DType t, double x);
// The next value of t above / below the one with these bits (finite inputs).
uint32_t next_up(DType t, uint32_t bits);
uint32_t next_down(DType t, uint32_t bits);

// Sum of the terms g*y of gate k, column j, formed and summed in fp32 in the
// given row order, rounded once to the dtype: a valid order of its own.
enum class Order { row, reversed, pairwise, float64 };
HostTensor grad_gate_with_order(const Case& c, Order order);

}  // namespace gatecheck::testing
