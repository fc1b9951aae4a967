// The sweep's device machinery on CUDA (skipped without a GPU): row
// comparisons and gathers agree with the CPU for every word width, a batch
// runner's sub-batches give the host twin's bits, and the quick grid runs end
// to end with the grid's counts.
#include <gtest/gtest.h>

#include "harness/run/batch_runner.h"
#include "harness/run/runner.h"
#include "properties/catalog/contract.h"
#include "sweep/sweep.h"
#include "tests/gpu.h"
#include "tests/sweep/planted_rows.h"

namespace gatecheck {
namespace {

TEST(DeviceRows, CudaAgreesWithTheCpu) {
  GATECHECK_REQUIRE_GPU();
  for (size_t rb : kRowBytes) {
    const Planted p = planted(300, rb, 7 * rb);
    EXPECT_EQ(differ_on(Device::cuda, p, 300, rb), p.want) << rb << "-byte rows";
    for (const std::vector<int64_t>& rows : {std::vector<int64_t>{5, 6, 7, 8}, std::vector<int64_t>{299, 0, 17, 17, 3}})
      EXPECT_EQ(gather_on(Device::cuda, p.a, rows, rb), gather_on(Device::cpu, p.a, rows, rb)) << rb << "-byte rows";
  }
}

Case small_case(int64_t rows, int64_t dim) {
  Case c = make_case(DType::bf16, rows, dim, 9);
  Prng rng(5);
  for (auto& k : c.index) k = rng.below(9);
  fill_values(&c, "normal", 11);
  return c;
}

TEST(BatchRunner, CudaSubBatchesAreTheHostTwinsBits) {
  GATECHECK_REQUIRE_GPU();
  const Case c = small_case(64, 336);
  const Subject cuda = make_subject("cuda", Device::cuda);
  const Subject host = make_subject("host", Device::cpu);
  BatchRunner r(cuda, c, 64);
  for (const std::vector<int64_t>& rows : {std::vector<int64_t>{63, 2, 40, 2}, std::vector<int64_t>{10, 11, 12}}) {
    ASSERT_TRUE(r.run_rows(rows).ok());
    const RunResult want = run_case(host, sub_case(c, rows));
    ASSERT_TRUE(want.status.ok());
    const size_t bytes = rows.size() * r.row_bytes();
    std::vector<uint8_t> got(bytes);
    read_bytes(Device::cuda, got.data(), r.batch(r.output("out")), bytes);
    EXPECT_EQ(got, want.outputs["out"].bytes);
    read_bytes(Device::cuda, got.data(), r.batch(r.output("grad_y")), bytes);
    EXPECT_EQ(got, want.outputs["grad_y"].bytes);
    std::vector<uint8_t> gg(r.gate_bytes());
    read_bytes(Device::cuda, gg.data(), r.batch(r.output("grad_gate")), gg.size());
    EXPECT_EQ(gg, want.outputs["grad_gate"].bytes);
  }
}

TEST(Sweep, QuickGridRunsOnCudaWithTheGridsCounts) {
  GATECHECK_REQUIRE_GPU();
  SweepGrid g = quick_grid();
  g.accuracy_rows = {257};  // the invariance grid in full; one accuracy size
  const SweepRun run = run_sweep({make_subject("cuda", Device::cuda)}, {}, g, SweepOptions{});
  ASSERT_EQ(run.impls.size(), 1u);
  const SweepImplResult& r = run.impls[0];
  EXPECT_EQ(r.error, "");
  const SweepCounts want = expected_counts(g);
  EXPECT_EQ(r.invariance.sub_batches, want.sub_batches);
  EXPECT_EQ(r.invariance.comparisons, want.comparisons);
  EXPECT_TRUE(r.invariance.batch_invariant());
  EXPECT_TRUE(r.invariance.params_repeatable);
  EXPECT_EQ(r.invariance.segments.failed, 0);
  ASSERT_EQ(r.accuracy.size(), 1u);
  EXPECT_EQ(r.accuracy[0].verdict, "pass");
  EXPECT_EQ(r.accuracy[0].eager_verdict, "pass");  // the kernels round as eager does
}

}  // namespace
}  // namespace gatecheck
