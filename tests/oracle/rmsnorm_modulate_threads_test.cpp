// rmsnorm_modulate's reference with its rows and columns on threads gives
// the bits of one thread: every field of every element (value, bound, kind,
// the second outcome), on every value class, for thread counts that split
// the columns unevenly or leave threads without a column. The comparator
// fails on a case one input bit apart. The eager model, on threads from 4M
// elements, gives each row the bits it has in a case of a few rows.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "oracles/op_oracles.h"
#include "oracles/oracle.h"
#include "tests/rmsnorm_test_cases.h"

namespace gatecheck::testing {
namespace {

// The first element whose Expected differs in any bit, or "".
std::string first_difference(const Reference& a, const Reference& b) {
  for (size_t o = 0; o < a.outputs.size(); ++o)
    for (size_t i = 0; i < a.outputs[o].size(); ++i) {
      const Expected &x = a.outputs[o][i], &y = b.outputs[o][i];
      if (std::memcmp(&x.value, &y.value, 8) != 0 || std::memcmp(&x.bound, &y.bound, 8) != 0 || x.kind != y.kind ||
          x.bitwise != y.bitwise || x.or_bits != y.or_bits || x.or_nan != y.or_nan || x.bits != y.bits)
        return a.op->outputs[o].name + std::string("[") + std::to_string(i) + "]";
    }
  return "";
}

TEST(RmsnormReferenceThreads, SameBitsOnAnyThreadCount) {
  struct Shape {
    int64_t rows, dim, gates;
  };
  for (Shape sh : {Shape{300, 37, 5}, Shape{64, 1001, 64}, Shape{200, 3, 7}})
    for (DType t : {DType::bf16, DType::f16, DType::f32})
      for (const char* cls : {"normal", "mixed_magnitude", "huge", "subnormal", "nan_inf", "order_sensitive"}) {
        const Case c = rms::make(t, sh.rows, sh.dim, sh.gates, cls, 8);
        const Reference one = rmsnorm_modulate_reference_on_threads(c, 1);
        for (int threads : {2, 3, 8}) {
          const Reference many = rmsnorm_modulate_reference_on_threads(c, threads);
          EXPECT_EQ(first_difference(one, many), "")
              << threads << " threads, " << describe(c) << " " << cls;
        }
      }
}

TEST(RmsnormReferenceThreads, TheComparatorSeesOneInputBit) {
  Case c = rms::make(DType::bf16, 300, 37, 5, "normal", 8);
  const Reference a = rmsnorm_modulate_reference_on_threads(c, 3);
  c.input("x").bytes[2 * 37 * 150] ^= 1;  // row 150's first x, its lowest bit
  const Reference b = rmsnorm_modulate_reference_on_threads(c, 3);
  EXPECT_NE(first_difference(a, b), "");
}

// A case of 4M elements and more takes the machine's threads; its rows then
// have the bits they have in a case of a few rows (one thread), on every
// dtype. The comparison sees a row's x negated.
TEST(RmsnormEagerModelThreads, RowsOnThreadsHaveOneThreadsBits) {
  for (DType t : {DType::bf16, DType::f16, DType::f32}) {
    Case c = rms::make(t, 1025, 4099, 7, "mixed_magnitude", 9);  // 4.2M elements
    const std::vector<int64_t> rows = {0, 1, 511, 512, 1023, 1024};
    const Case few = sub_case(c, rows);
    const HostTensor all = eager_model(c)["out"], some = eager_model(few)["out"];
    for (size_t i = 0; i < rows.size(); ++i)
      for (int64_t j = 0; j < c.dim; ++j)
        ASSERT_EQ(all.bits(rows[i] * c.dim + j), some.bits(int64_t(i) * c.dim + j))
            << describe(c) << " row " << rows[i] << " column " << j;
    Case moved = few;
    const uint32_t sign = t == DType::f32 ? 0x80000000u : 0x8000u;
    for (int64_t j = 0; j < c.dim; ++j)  // row 512's x negated
      moved.input("x").set_bits(3 * c.dim + j, moved.input("x").bits(3 * c.dim + j) ^ sign);
    const HostTensor other = eager_model(moved)["out"];
    bool differs = false;
    for (int64_t j = 0; j < c.dim; ++j) differs = differs || other.bits(3 * c.dim + j) != some.bits(3 * c.dim + j);
    EXPECT_TRUE(differs) << "a row's x negated changed none of its outputs";
  }
}

}  // namespace
}  // namespace gatecheck::testing
