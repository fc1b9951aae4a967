// Empty problems are valid, and the H3 shared-index form expands to one
// index entry per row.
#include <gtest/gtest.h>

#include "contract_test_support.h"

namespace gatecheck::testing {
namespace {

// rows = 0: nothing to compute per row, and grad_gate is the empty sum,
// +0 in every element (the sentinel is overwritten).
TEST(ContractEmpty, ZeroRowsGivesPlusZeroGradGate) {
  for (DType t : {DType::f32, DType::f16, DType::bf16}) {
    CallBuffers b(0, 4, 3, t);
    ASSERT_EQ(b.grad_gate.size(), size_t(12 * dtype_size(t)));
    ASSERT_TRUE(b.res.empty());  // null res, y, out, index: allowed with no elements
    EXPECT_TRUE(b.fwd().ok()) << b.fwd().message;
    const Status s = b.bwd();
    EXPECT_TRUE(s.ok()) << s.message;
    for (uint8_t byte : b.grad_gate) EXPECT_EQ(byte, 0) << dtype_name(t);
  }
}

TEST(ContractEmpty, ZeroRowsAndZeroGates) {
  CallBuffers b(0, 4, 0);
  EXPECT_TRUE(b.fwd().ok());
  EXPECT_TRUE(b.bwd().ok());
}

// dim = 0: every tensor is empty; the index is still required and checked.
TEST(ContractEmpty, ZeroDim) {
  CallBuffers b(3, 0, 2);
  EXPECT_TRUE(b.fwd().ok()) << b.fwd().message;
  EXPECT_TRUE(b.bwd().ok()) << b.bwd().message;
  b.index[1] = 2;
  EXPECT_EQ(b.fwd().kind, ErrorKind::index_out_of_range);
}

TEST(ContractEmpty, ExpandSharedIndexH3Form) {
  std::vector<int64_t> expanded;
  ASSERT_TRUE(expand_shared_index({2, 0, 1}, 9, &expanded).ok());
  EXPECT_EQ(expanded, (std::vector<int64_t>{2, 0, 1, 2, 0, 1, 2, 0, 1}));
  ASSERT_TRUE(expand_shared_index({}, 0, &expanded).ok());
  EXPECT_TRUE(expanded.empty());
  ASSERT_TRUE(expand_shared_index({4}, 3, &expanded).ok());
  EXPECT_EQ(expanded, (std::vector<int64_t>{4, 4, 4}));
}

TEST(ContractEmpty, ExpandSharedIndexRejectsBadForms) {
  std::vector<int64_t> expanded{7};
  Status s = expand_shared_index({2, 0, 1}, 10, &expanded);
  EXPECT_EQ(s.kind, ErrorKind::shape_mismatch);
  EXPECT_NE(s.message.find("rows = 10"), std::string::npos) << s.message;
  EXPECT_NE(s.message.find("S = 3"), std::string::npos) << s.message;
  s = expand_shared_index({}, 4, &expanded);
  EXPECT_EQ(s.kind, ErrorKind::shape_mismatch);
  EXPECT_NE(s.message.find("rows = 4"), std::string::npos) << s.message;
  s = expand_shared_index({1}, -2, &expanded);
  EXPECT_EQ(s.kind, ErrorKind::shape_mismatch);
  EXPECT_NE(s.message.find("rows = -2"), std::string::npos) << s.message;
  EXPECT_EQ(expanded, std::vector<int64_t>{7});  // untouched on error
}

// The expanded H3 index drives the host like any per-row index: row r
// reads gate row shared[r % S].
TEST(ContractEmpty, ExpandedIndexDrivesTheHost) {
  std::vector<int64_t> expanded;
  ASSERT_TRUE(expand_shared_index({1, 0}, 4, &expanded).ok());
  CallBuffers b(4, 1, 2);
  b.index = expanded;
  const float gate[2] = {10, 20}, one = 1;
  std::memcpy(b.gate.data(), gate, sizeof gate);
  for (int64_t r = 0; r < 4; ++r) {
    std::memset(b.res.data() + 4 * r, 0, 4);
    std::memcpy(b.y.data() + 4 * r, &one, 4);
  }
  ASSERT_TRUE(b.fwd().ok());
  float out[4];
  std::memcpy(out, b.out.data(), sizeof out);
  EXPECT_EQ(out[0], 20);
  EXPECT_EQ(out[1], 10);
  EXPECT_EQ(out[2], 20);
  EXPECT_EQ(out[3], 10);
}

}  // namespace
}  // namespace gatecheck::testing
