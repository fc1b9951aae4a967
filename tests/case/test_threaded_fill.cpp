// The "normal" value class fills large tensors on threads (value_classes.cpp);
// the result must be bit for bit what one thread drawing the stream in order
// gives, or every corpus file stored as a generator spec would replay
// differently on a machine with another core count.
#include <gtest/gtest.h>

#include "case/case_spec.h"
#include "case/prng.h"

namespace gatecheck {
namespace {

// fill_values' order, one draw pair per element, on one thread.
void fill_serially(Case* c, uint64_t seed) {
  Prng rng(seed);
  for (HostTensor* t : {&c->input("res"), &c->input("gate"), &c->input("y"), &c->input("grad_out")}) {
    const double scale = t == &c->input("gate") ? 0.1 : 1.0;
    for (int64_t i = 0; i < t->numel(); ++i) t->set_value_rn(i, float(rng.normal() * scale));
  }
}

// The first element whose bits differ, or -1.
int64_t first_difference(const HostTensor& a, const HostTensor& b) {
  if (a.numel() != b.numel()) return 0;
  for (int64_t i = 0; i < a.numel(); ++i)
    if (a.bits(i) != b.bits(i)) return i;
  return -1;
}

TEST(ThreadedFill, NormalIsBitForBitTheSerialStream) {
  // res, y and grad_out above the threaded size (2^22 elements), in pieces of
  // 2^20 with a short last one; the gate table below it.
  for (DType t : {DType::bf16}) {
    Case threaded = make_case(t, 1025, 4099, 9);
    Case serial = threaded;
    fill_values(&threaded, "normal", 12345);
    fill_serially(&serial, 12345);
    EXPECT_EQ(first_difference(threaded.input("res"), serial.input("res")), -1) << "res, " << dtype_name(t);
    EXPECT_EQ(first_difference(threaded.input("gate"), serial.input("gate")), -1) << "gate, " << dtype_name(t);
    EXPECT_EQ(first_difference(threaded.input("y"), serial.input("y")), -1) << "y, " << dtype_name(t);
    EXPECT_EQ(first_difference(threaded.input("grad_out"), serial.input("grad_out")), -1) << "grad_out, " << dtype_name(t);
  }
}

TEST(ThreadedFill, ASkippedStreamContinuesWhereTheDrawsLeftOff) {
  Prng a(7), b(7);
  for (int i = 0; i < 1000; ++i) a.next();
  b.skip(1000);
  EXPECT_EQ(a.next(), b.next());
}

}  // namespace
}  // namespace gatecheck
