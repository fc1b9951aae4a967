// The backward without grad_res (gate_residual_bwd_cuda_strided_no_grad_res,
// the LibTorch op's entry, which takes grad_out itself as grad_res): on every
// index plan and tile kernel, and captured in a CUDA graph, out, grad_gate and
// grad_y are the host twin's bits and grad_res keeps its poison; the plain
// backward (the plugin ABI's) on the same cases writes grad_res.
#include <gtest/gtest.h>

#include <random>

#include "cuda_runs.h"
#include "kernels/cuda/gate_residual_cuda.h"
#include "tests/cuda_tuning_scope.h"
#include "tests/gpu.h"

namespace gatecheck {
namespace testing_cuda {
namespace {

const int64_t kRows[] = {1, 3, 17, 256, 257, 513, 1500};
const int64_t kDims[] = {1, 7, 8, 16, 33, 64, 130, 256};
const DType kTypes[] = {DType::bf16, DType::f16, DType::f32};

// Both backwards on case c: the one without grad_res against the host twin
// with grad_res left as poison, the plain one against the host twin.
void expect_both(const RawCase& c, CudaPlacement where, const std::string& label) {
  const RawOutputs h = run_host(c);
  ASSERT_TRUE(h.fwd.ok() && h.bwd.ok()) << h.fwd.message << h.bwd.message;
  RawOutputs poisoned = h;
  const uint32_t poison = c.dtype == DType::f32 ? 0x01010101u * where.poison : 0x0101u * where.poison;
  poisoned.grad_res.assign(h.grad_res.size(), poison);
  where.no_grad_res = true;
  const RawOutputs skip = run_cuda(c, where);
  ASSERT_TRUE(skip.fwd.ok() && skip.bwd.ok()) << label << ": " << skip.fwd.message << skip.bwd.message;
  EXPECT_EQ(compare_outputs(c, skip, poisoned), "") << label << ", without grad_res (" << c.describe() << ")";
  where.no_grad_res = false;
  const RawOutputs plain = run_cuda(c, where);
  ASSERT_TRUE(plain.fwd.ok() && plain.bwd.ok()) << label << ": " << plain.fwd.message << plain.bwd.message;
  EXPECT_EQ(compare_outputs(c, plain, h), "") << label << ", with grad_res (" << c.describe() << ")";
}

TEST(CudaNoGradRes, EveryPlanAndTileKernelSkipsOnlyGradRes) {
  GATECHECK_REQUIRE_GPU();
  std::mt19937_64 rng(51);
  const TuningScope tuning_back;
  struct Path { int plan, tile, seg; };  // as CudaVsHost.EveryPlanAndTileKernelBitIdentical, fewer shapes
  const Path paths[] = {{0, 0, 0}, {1, 1, 0}, {1, 2, 0}, {1, 3, 0}, {2, 1, 0}, {2, 2, 0}, {2, 3, 0},
                        {2, 3, 256}, {3, 0, 0}, {3, 0, 256}, {1, 4, 0}, {2, 4, 0}};
  for (const auto& [plan, tile, seg] : paths) {
    gate_residual_cuda_tuning().bwd_plan = plan;
    gate_residual_cuda_tuning().bwd_tile = tile;
    gate_residual_cuda_tuning().pipe_row_bytes = seg;
    const std::string label = "plan=" + std::to_string(plan) + " tile=" + std::to_string(tile) +
                              (seg ? " seg=" + std::to_string(seg) : std::string());
    for (int i = 0; i < 12 && !HasFailure(); ++i) {
      const int64_t rows = kRows[rng() % (sizeof(kRows) / sizeof(kRows[0]))];
      const int64_t gates_choice[] = {1, 9, rows / 3 + 1, rows};
      const RawCase c = make_case(rng, kTypes[rng() % 3], rows, kDims[rng() % (sizeof(kDims) / sizeof(kDims[0]))],
                                  gates_choice[rng() % 4], Pattern::random);
      CudaPlacement where;
      if (rng() % 3 == 0)
        for (size_t& o : where.offset) o = (rng() % 2) * size_t(dtype_size(c.dtype));
      expect_both(c, where, label + ", case " + std::to_string(i));
    }
    expect_both(make_case(rng, DType::bf16, 4097, 40, 9, Pattern::random), {}, label + ", 4097 rows");
    expect_both(make_case(rng, DType::f16, 20000, 16, 700, Pattern::random), {}, label + ", 20000 rows, 700 gates");
  }
}

TEST(CudaNoGradRes, CapturedInACudaGraph) {
  GATECHECK_REQUIRE_GPU();
  std::mt19937_64 rng(52);
  CudaPlacement where;
  where.own_stream = true;
  where.capture_graph = true;
  expect_both(make_case(rng, DType::bf16, 4097, 256, 9, Pattern::random), where, "4097 rows, 9 gates, graph");
  expect_both(make_case(rng, DType::bf16, 20000, 24, 20000, Pattern::random), where, "20000 gates, graph");
}

}  // namespace
}  // namespace testing_cuda
}  // namespace gatecheck
