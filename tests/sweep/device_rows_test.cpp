// The sweep's device machinery on the CPU: each row's first differing byte
// for every word width, and row gathers in order (device_rows_cuda_test.cpp:
// the same on CUDA against these).
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

#include "tests/sweep/planted_rows.h"

namespace gatecheck {
namespace {

TEST(DeviceRows, CpuFindsEachRowsFirstDifferingByte) {
  for (size_t rb : kRowBytes) {
    const Planted p = planted(37, rb, rb);
    EXPECT_EQ(differ_on(Device::cpu, p, 37, rb), p.want) << rb << "-byte rows";
  }
}

TEST(DeviceRows, CpuGathersRowsInOrder) {
  const size_t rb = 6;
  std::vector<uint8_t> src(5 * rb);
  std::iota(src.begin(), src.end(), 0);
  const auto g = gather_on(Device::cpu, src, {3, 0, 3}, rb);
  ASSERT_EQ(g.size(), 3 * rb);
  EXPECT_EQ(std::memcmp(g.data(), src.data() + 3 * rb, rb), 0);
  EXPECT_EQ(std::memcmp(g.data() + rb, src.data(), rb), 0);
  EXPECT_EQ(std::memcmp(g.data() + 2 * rb, src.data() + 3 * rb, rb), 0);
}

}  // namespace
}  // namespace gatecheck
