// The bounds hold for correct implementations: the host twin, a fused
// one-rounding forward, and other valid grad_gate summation orders, over
// every dtype and value class (including long segments).
#include <gtest/gtest.h>

#include <cmath>

#include "tests/gate_residual_test_names.h"
#include "oracle_test_support.h"

namespace gatecheck::testing {
namespace {

void expect_within(const Reference& ref, const Outputs& o, const std::string& label) {
  for (const char* name : kOutputNames) {
    const Comparison c = compare_accuracy(name, o[name], ref[name]);
    EXPECT_TRUE(c.ok()) << label << "\n" << c.summary();
  }
}

std::string label(const Case& c, uint64_t seed) { return describe(c) + " seed=" + std::to_string(seed); }

TEST(OracleBoundsHold, HostTwinEveryDTypeAndValueClass) {
  uint64_t seed = 1;
  for (DType t : kAllDTypes)
    for (Values v : kAllValues)
      for (auto [rows, dim, gates] : {std::tuple{1, 1, 1}, {17, 9, 3}, {300, 5, 2}}) {
        const Case c = random_case(t, rows, dim, gates, v, ++seed);
        expect_within(oracle_reference(c), run_host(c), label(c, seed));
      }
}

// One gate over 4097 rows: tiles of 256 plus a tail, the prior art's length.
TEST(OracleBoundsHold, HostTwinLongSegments) {
  uint64_t seed = 100;
  for (DType t : kAllDTypes)
    for (Values v : {Values::normal, Values::mixed, Values::cancelling, Values::small_int}) {
      const Case c = random_case(t, 4097, 3, 1, v, ++seed);
      expect_within(oracle_reference(c), run_host(c), label(c, seed));
    }
}

// A fused forward (one rounding of the exact res + gate*y) is also correct.
TEST(OracleBoundsHold, FusedOneRoundingForward) {
  uint64_t seed = 200;
  for (DType t : kAllDTypes)
    for (Values v : {Values::normal, Values::mixed, Values::subnormal, Values::cancelling}) {
      const Case c = random_case(t, 64, 16, 4, v, ++seed);
      HostTensor fused(t, c.rows, c.dim);
      for (int64_t r = 0; r < c.rows; ++r)
        for (int64_t j = 0; j < c.dim; ++j) {
          const int64_t i = r * c.dim + j;
          // exact in float64 for these classes (exponent spread < 53 bits)
          const double v64 = double(c.input("res").value(i)) +
                             double(c.input("gate").value(c.index[size_t(r)] * c.dim + j)) * c.input("y").value(i);
          fused.set_bits(i, round_double(t, v64));
        }
      const Comparison cmp = compare_accuracy("out", fused, oracle_reference(c)["out"]);
      EXPECT_TRUE(cmp.ok()) << label(c, seed) << "\n" << cmp.summary();
    }
}

// Any summation order is valid for grad_gate: reversed, pairwise, float64.
TEST(OracleBoundsHold, OtherValidSummationOrders) {
  uint64_t seed = 300;
  for (DType t : kAllDTypes)
    for (Values v : {Values::normal, Values::cancelling, Values::mixed, Values::subnormal})
      for (Order order : {Order::row, Order::reversed, Order::pairwise, Order::float64}) {
        const Case c = random_case(t, 1500, 4, 2, v, ++seed);
        const Comparison cmp =
            compare_accuracy("grad_gate", grad_gate_with_order(c, order), oracle_reference(c)["grad_gate"]);
        EXPECT_TRUE(cmp.ok()) << label(c, seed) << " order=" << int(order) << "\n" << cmp.summary();
      }
}

// The eager model's out and grad_y (two and one roundings) are correct too.
TEST(OracleBoundsHold, EagerModelForwardAndGradY) {
  uint64_t seed = 400;
  for (DType t : kAllDTypes)
    for (Values v : kAllValues) {
      const Case c = random_case(t, 40, 7, 3, v, ++seed);
      const Reference ref = oracle_reference(c);
      const Outputs e = eager_model(c);
      for (const char* name : {"out", "grad_res", "grad_y"}) {
        const Comparison cmp = compare_accuracy(name, e[name], ref[name]);
        EXPECT_TRUE(cmp.ok()) << label(c, seed) << "\n" << cmp.summary();
      }
    }
}

// Exhaustive over every 16-bit y (and a sweep of g) for a handful of
// (res, gate) pairs: every binade, the subnormals, the overflow boundary,
// and sums whose operands are far apart, where eager's fp32 add rounds
// before the final rounding (double rounding, which must stay within bound).
TEST(OracleBoundsHold, Exhaustive16BitOperand) {
  struct Pair { DType t; uint16_t res, gate; };
  const Pair pairs[] = {{DType::bf16, 0x3f80, 0x3f81}, {DType::bf16, 0xc000, 0x3fff}, {DType::bf16, 0x0001, 0x4000},
                        {DType::bf16, 0x7f00, 0x4100}, {DType::bf16, 0x8000, 0xbf80}, {DType::bf16, 0x3c00, 0x0080},
                        {DType::f16, 0x3c00, 0x3c01},  {DType::f16, 0x7800, 0x3bff},  {DType::f16, 0x0001, 0x4000},
                        {DType::f16, 0xf800, 0x5800},  {DType::f16, 0x8000, 0xbc00},  {DType::f16, 0x1400, 0x0400}};
  for (const Pair& pr : pairs) {
    Case c = make_case(pr.t, 65536, 1, 1);
    c.input("gate").set_bits(0, pr.gate);
    for (int64_t i = 0; i < 65536; ++i) {
      c.input("res").set_bits(i, pr.res);
      c.input("y").set_bits(i, uint32_t(i));
      c.input("grad_out").set_bits(i, uint32_t((i * 40503) & 0xffff));
    }
    const Reference ref = oracle_reference(c);
    const Outputs o = run_host(c);
    for (const char* name : {"out", "grad_res", "grad_y"}) {
      const Comparison cmp = compare_accuracy(name, o[name], ref[name]);
      EXPECT_TRUE(cmp.ok()) << dtype_name(pr.t) << std::hex << " res 0x" << pr.res << " gate 0x" << pr.gate << "\n"
                            << cmp.summary();
    }
  }
}

}  // namespace
}  // namespace gatecheck::testing
