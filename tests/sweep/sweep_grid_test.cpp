// The prior art's grids as the sweep runs them: the counts its report gives
// (PRIOR_ART.md: 2124 sub-batches, 2256 comparisons, rows = 3n), the batch
// sizes and probe rows it lists, and --quick's.
#include <gtest/gtest.h>

#include "sweep/sweep_grid.h"

namespace gatecheck {
namespace {

TEST(SweepGrid, FullGridGivesTheSeedReportsCounts) {
  const SweepGrid g = full_grid();
  const SweepCounts c = expected_counts(g);
  EXPECT_EQ(c.all_rows_rows, (std::vector<int64_t>{192, 771, 6144}));  // 3 seeds x n
  EXPECT_EQ(c.sub_batches, 2124);
  EXPECT_EQ(c.comparisons, 2256);
  EXPECT_EQ(g.dim, 5376);
  EXPECT_EQ(g.gates, 9);
  EXPECT_EQ(g.dtype, DType::bf16);
  EXPECT_EQ(g.accuracy_rows, (std::vector<int64_t>{4097, 32768}));
  EXPECT_EQ(g.warmup, 20);
  EXPECT_EQ(g.reps, 100);
}

TEST(SweepGrid, SubBatchesAreEvery256RowsForSmallSizesAndContiguousForLarge) {
  // Per seed: 512 + 512 sampled one every 256 rows, 32 of 4097 (the last of
  // 4065 rows), 4 of 32768, 2 of 65536.
  EXPECT_EQ(sub_batches(131072, 1).size(), 512u);
  EXPECT_EQ(sub_batches(131072, 7).size(), 512u);
  EXPECT_EQ(sub_batches(131072, 7)[1].start, 256);
  const auto big = sub_batches(131072, 4097);
  ASSERT_EQ(big.size(), 32u);
  EXPECT_EQ(big.back().start, 31 * 4097);
  EXPECT_EQ(big.back().rows, 131072 - 31 * 4097);
  EXPECT_EQ(sub_batches(131072, 32768).size(), 4u);
  EXPECT_EQ(sub_batches(131072, 65536).size(), 2u);
}

TEST(SweepGrid, BatchSizesAndProbesAreTheSeedReportsLists) {
  EXPECT_EQ(sweep_batch_sizes(2048),
            (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255,
                                  256, 257, 511, 512, 513, 1023, 1024, 1025, 2047, 2048}));
  EXPECT_EQ(probe_rows(2048), (std::vector<int64_t>{0, 259, 515, 771, 1027, 1283, 1539, 2047}));
  // Front, middle, back, distinct: 1, 2, then 3 places.
  EXPECT_EQ(probe_positions(1), (std::vector<int64_t>{0}));
  EXPECT_EQ(probe_positions(2), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(probe_positions(64), (std::vector<int64_t>{0, 31, 63}));
}

TEST(SweepGrid, QuickIsThePriorArtsOwnQuickForInvariance) {
  const SweepGrid q = quick_grid();
  const SweepCounts c = expected_counts(q);
  EXPECT_TRUE(q.quick);
  EXPECT_EQ(c.all_rows_rows, (std::vector<int64_t>{51, 192}));
  EXPECT_EQ(c.sub_batches, 2 * (256 + 37 + 4));                 // every 1-, 7- and 64-row sub-batch of 256
  EXPECT_EQ(c.comparisons, 3 * (8 * (1 + 2 + 15 * 3) + 8));     // 17 sizes up to 64, 8 probes
  EXPECT_EQ(q.dim, 336);
  EXPECT_EQ(q.accuracy_rows, (std::vector<int64_t>{257, 2048}));
  EXPECT_EQ(q.warmup, 5);
  EXPECT_EQ(q.reps, 25);
  EXPECT_FALSE(q.quick_scaling.empty());
}

}  // namespace
}  // namespace gatecheck
