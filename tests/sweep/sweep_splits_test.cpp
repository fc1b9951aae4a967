// The splits the sweep checks split_invariance on (sweep_detail.h): each a
// split of every row of the case (disjoint parts, all rows), of the kinds and
// part counts the report's plan text states, the same for a seed.
#include <gtest/gtest.h>

#include <set>

#include "case/case_spec.h"
#include "sweep/sweep_detail.h"

namespace gatecheck {
namespace {

TEST(SweepSplits, FourSplitsOfEveryRow) {
  for (int64_t n : {17, 64, 2048}) {
    const Case c = make_case(DType::bf16, n, 1, 9);
    const auto splits = sweep_detail::sweep_splits(c, 3);
    ASSERT_EQ(splits.size(), 4u);
    std::vector<std::string> kinds;
    for (const BatchPlan& p : splits) {
      kinds.push_back(p.kind);
      EXPECT_TRUE(is_split_kind(p.kind));
      std::set<int64_t> rows;
      size_t total = 0;
      for (const auto& b : p.batches) {
        EXPECT_FALSE(b.empty());
        rows.insert(b.begin(), b.end());
        total += b.size();
      }
      EXPECT_EQ(total, size_t(n)) << p.kind << " at " << n;  // disjoint
      EXPECT_EQ(rows.size(), size_t(n)) << p.kind << " at " << n;  // every row
    }
    EXPECT_EQ(kinds, (std::vector<std::string>{"micro_batches", "micro_batches", "strided", "ranks"}));
    EXPECT_EQ(splits[0].batches.size(), 2u);
    EXPECT_EQ(splits[1].batches.size(), 8u);
    EXPECT_EQ(splits[1].batches.front().front(), 0);  // contiguous, in order
    EXPECT_EQ(splits[1].batches.back().back(), n - 1);
    EXPECT_EQ(splits[2].batches.size(), 4u);
    EXPECT_LE(splits[3].batches.size(), size_t(kMaxSplitParts));
    if (n >= 2048) {
      EXPECT_GE(splits[3].batches.size(), 60u);  // 64 ranks, hardly any empty
    }
    EXPECT_EQ(sweep_detail::sweep_splits(c, 3)[3].batches, splits[3].batches);  // the same for a seed
    EXPECT_NE(sweep_detail::sweep_splits(c, 4)[3].batches, splits[3].batches);
  }
}

}  // namespace
}  // namespace gatecheck
