// The sweep hands its results so far to the checkpoint (which the CLI writes)
// after each phase and after each accuracy size, so that a run killed while
// the largest size's oracle runs keeps the sizes before it.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/rmsnorm_modulate.h"
#include "properties/catalog/contract.h"
#include "sweep/sweep.h"

namespace gatecheck {
namespace {

TEST(SweepCheckpoint, EachAccuracySizeIsCheckpointed) {
  const OpSchema& op = rmsnorm_modulate_schema();
  SweepGrid g = quick_grid(op);
  g.dim = g.accuracy_dim = 16;
  g.seeds = {3};
  g.full_batches = {4};
  g.big_batch = 8;
  g.sub_batch_sizes = {1};
  g.sub_batch_seeds = 1;
  g.accuracy_rows = {5, 9, 13};
  g.reps = 0;
  SweepOptions opt;
  std::vector<int> sizes_done;  // at each checkpoint: the accuracy sizes with results
  opt.checkpoint = [&](const SweepRun& so_far) {
    ASSERT_EQ(so_far.impls.size(), 1u);
    int done = 0;
    for (const AccuracyAt& a : so_far.impls[0].accuracy) done += a.rows > 0 && !a.outputs.empty();
    sizes_done.push_back(done);
  };
  const SweepRun run = run_sweep({make_subject("host", Device::cpu, op)}, {}, g, opt);
  ASSERT_EQ(run.impls[0].error, "");
  EXPECT_TRUE(run.complete);
  // the two invariance phases, then one a size
  EXPECT_EQ(sizes_done, (std::vector<int>{0, 0, 1, 2, 3}));
}

}  // namespace
}  // namespace gatecheck
