// DeferredComparisons (properties/checks/deferred_comparisons.h): comparisons
// kept until flush, in the order added, within a budget of kept bytes; past
// it, the kept ones run at once, then the newest.
#include "properties/checks/deferred_comparisons.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gatecheck::checks {
namespace {

// A tensor of n f32 elements, its first element's first byte `tag`.
std::vector<HostTensor> outputs(int64_t n, uint8_t tag) {
  HostTensor t(DType::f32, 1, n);
  t.bytes[0] = tag;
  return {t};
}

TEST(DeferredComparisons, KeptUntilFlushInOrderWithTheirOutputs) {
  std::string log;
  DeferredComparisons d;
  for (uint8_t k = 1; k <= 3; ++k)
    d.add(outputs(4, k), [&log, k](const std::vector<HostTensor>& got) {
      log += std::to_string(k) + ":" + std::to_string(got[0].bytes[0]) + " ";
    });
  EXPECT_EQ(log, "") << "a comparison ran before flush";
  EXPECT_EQ(d.kept(), 3u);
  d.flush();
  EXPECT_EQ(log, "1:1 2:2 3:3 ");
  EXPECT_EQ(d.kept(), 0u);
}

// A budget of 40 bytes: two 16-byte outputs kept, the third runs the two at
// once and is kept; one of 64 bytes runs the kept one, then itself, at once.
TEST(DeferredComparisons, PastTheBudgetTheKeptRunAtOnceInOrder) {
  std::string log;
  DeferredComparisons d(40);
  auto add = [&](int64_t n, uint8_t k) {
    d.add(outputs(n, k), [&log, k](const std::vector<HostTensor>& got) {
      log += std::to_string(k) + ":" + std::to_string(got[0].bytes[0]) + " ";
    });
  };
  add(4, 1);
  add(4, 2);
  EXPECT_EQ(log, "");
  add(4, 3);
  EXPECT_EQ(log, "1:1 2:2 ");
  EXPECT_EQ(d.kept(), 1u);
  add(16, 4);
  EXPECT_EQ(log, "1:1 2:2 3:3 4:4 ");
  EXPECT_EQ(d.kept(), 0u);
  add(4, 5);
  d.flush();
  EXPECT_EQ(log, "1:1 2:2 3:3 4:4 5:5 ");
}

}  // namespace
}  // namespace gatecheck::checks
