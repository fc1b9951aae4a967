// The CUDA kernels on bad and empty input: an out-of-range index is reported
// by the device status (and by the plugin ABI) and nothing is written; empty
// problems succeed, and rows = 0 gives an all-zero grad_gate.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <array>
#include <random>

#include "cuda_runs.h"
#include "device_buffers.h"
#include "kernels/cuda/gate_residual_cuda.h"
#include "tests/cuda_tuning_scope.h"
#include "tests/gpu.h"

namespace gatecheck {
namespace testing_cuda {
namespace {

bool all_poison(const std::vector<uint32_t>& bits, DType t, uint8_t poison) {
  const uint32_t p = t == DType::f32 ? 0x01010101u * poison : 0x0101u * poison;
  for (uint32_t b : bits)
    if (b != p) return false;
  return true;
}

TEST(CudaErrors, OutOfRangeIndexReportedAndNothingWritten) {
  GATECHECK_REQUIRE_GPU();
  const TuningScope tuning_back;
  std::mt19937_64 rng(7);
  for (int plan : {3, 2, 1})  // the one-kernel backward (automatic here), counting, CUB
  for (int64_t bad : {int64_t(-1), int64_t(9), int64_t(1) << 40}) {
    SCOPED_TRACE("plan=" + std::to_string(plan));
    gate_residual_cuda_tuning().bwd_plan = plan;
    gate_residual_cuda_tuning().fwd_rows = plan == 3 ? 0 : plan;  // each forward block shape (4 by default, 2, 1 rows) once
    RawCase c = make_case(rng, DType::bf16, 600, 24, 9, Pattern::random);
    c.index[417] = bad;
    c.index[530] = -5;  // a later bad row: the first one must be named
    const RawOutputs d = run_cuda(c, {});
    for (const Status* s : {&d.fwd, &d.bwd}) {
      EXPECT_EQ(s->kind, ErrorKind::index_out_of_range) << s->message;
      EXPECT_NE(s->message.find("index[417] = " + std::to_string(bad) + " is out of range [0, 9)"),
                std::string::npos)
          << s->message;
    }
    EXPECT_TRUE(all_poison(d.out, c.dtype, 0xa5)) << "out was written despite a bad index";
    EXPECT_TRUE(all_poison(d.grad_res, c.dtype, 0xa5)) << "grad_res was written";
    EXPECT_TRUE(all_poison(d.grad_y, c.dtype, 0xa5)) << "grad_y was written";
    EXPECT_TRUE(all_poison(d.grad_gate, c.dtype, 0xa5)) << "grad_gate was written";
  }
}

// After a failed call, the next good call on the same stream succeeds (the
// status belongs to the call, not the stream).
TEST(CudaErrors, GoodCallAfterBadCallSucceeds) {
  GATECHECK_REQUIRE_GPU();
  std::mt19937_64 rng(8);
  RawCase bad = make_case(rng, DType::f16, 100, 16, 4, Pattern::random);
  bad.index[3] = 4;
  EXPECT_FALSE(run_cuda(bad, {}).fwd.ok());
  const RawCase good = make_case(rng, DType::f16, 100, 16, 4, Pattern::random);
  const RawOutputs d = run_cuda(good, {});
  EXPECT_TRUE(d.fwd.ok()) << d.fwd.message;
  EXPECT_TRUE(d.bwd.ok()) << d.bwd.message;
  EXPECT_EQ(compare_outputs(good, d, run_host(good)), "");
}

// A call that launches nothing (rows = 0) after a failed call on the same
// stream reports its own success, not the earlier failure.
TEST(CudaErrors, EmptyCallAfterBadCallReportsItself) {
  GATECHECK_REQUIRE_GPU();
  std::mt19937_64 rng(10);
  RawCase bad = make_case(rng, DType::bf16, 50, 8, 3, Pattern::random);
  bad.index[7] = -2;
  const RawOutputs b = run_cuda(bad, {});
  EXPECT_EQ(b.fwd.kind, ErrorKind::index_out_of_range);
  EXPECT_EQ(b.bwd.kind, ErrorKind::index_out_of_range);
  const RawCase empty = make_case(rng, DType::bf16, 0, 8, 3, Pattern::random);
  const RawOutputs e = run_cuda(empty, {});
  EXPECT_TRUE(e.fwd.ok()) << e.fwd.message;
  EXPECT_TRUE(e.bwd.ok()) << e.bwd.message;
}

// The device status can be read without the sync helper.
TEST(CudaErrors, StatusReadableWithoutSyncHelper) {
  GATECHECK_REQUIRE_GPU();
  std::vector<int64_t> idx = {0, 1, 7, 2};
  DeviceBuffer d_idx(idx.size() * 8), a(4 * 2 * 2), g(3 * 2 * 2), o(4 * 2 * 2);
  d_idx.upload(idx.data());
  const gatecheck_problem p{4, 2, 3, GATECHECK_BF16, GATECHECK_CUDA, nullptr};
  ASSERT_TRUE(gate_residual_fwd_cuda(p, a.get(), g.get(), static_cast<const int64_t*>(d_idx.get()), a.get(),
                                     o.get()).ok());
  const CudaStatusRef ref = gate_residual_cuda_status_ref(nullptr);
  ASSERT_NE(ref.word, nullptr);
  unsigned long long word = 0;
  ASSERT_EQ(cudaMemcpy(&word, ref.word, sizeof word, cudaMemcpyDeviceToHost), cudaSuccess);
  int64_t row = -1;
  ASSERT_TRUE(cuda_status_bad_row(word, ref.epoch, &row));
  EXPECT_EQ(row, 2);
  EXPECT_FALSE(cuda_status_bad_row(word, ref.epoch + 1, &row)) << "an old epoch must not report";
}

TEST(CudaErrors, PluginReportsBadIndex) {
  GATECHECK_REQUIRE_GPU();
  const gatecheck_plugin* pl = gate_residual_cuda_plugin();
  std::vector<int64_t> idx = {0, 3};
  DeviceBuffer d_idx(16), a(2 * 4 * 4), g(3 * 4 * 4), o(2 * 4 * 4);
  d_idx.upload(idx.data());
  const gatecheck_problem p{2, 4, 3, GATECHECK_F32, GATECHECK_CUDA, nullptr};
  const int rc = pl->forward(&p, a.get(), g.get(), static_cast<const int64_t*>(d_idx.get()), a.get(), o.get());
  EXPECT_EQ(rc, int(ErrorKind::index_out_of_range));
  EXPECT_NE(std::string(pl->last_error()).find("index[1] = 3 is out of range [0, 3)"), std::string::npos)
      << pl->last_error();
}

TEST(CudaErrors, HostPointerRejectedAsUnsupportedDeviceIsNotClaimed) {
  // The contract checks run before any launch: a cpu problem is refused by name.
  const gatecheck_problem p{1, 1, 1, GATECHECK_F32, GATECHECK_CPU, nullptr};
  float x = 0;
  int64_t i = 0;
  const Status s = gate_residual_fwd_cuda(p, &x, &x, &i, &x, &x);
  EXPECT_EQ(s.kind, ErrorKind::unsupported_device) << s.message;
}

TEST(CudaErrors, EmptyProblems) {
  GATECHECK_REQUIRE_GPU();
  std::mt19937_64 rng(9);
  // rows = 0: grad_gate is all +0.
  RawCase c = make_case(rng, DType::bf16, 0, 12, 5, Pattern::random);
  RawOutputs d = run_cuda(c, {});
  EXPECT_TRUE(d.fwd.ok() && d.bwd.ok()) << d.fwd.message << d.bwd.message;
  EXPECT_EQ(compare_outputs(c, d, run_host(c)), "");
  for (uint32_t b : d.grad_gate) ASSERT_EQ(b, 0u);
  // dim = 0 and rows = gates = 0: nothing to write, success.
  for (auto shape : {std::array<int64_t, 3>{5, 0, 3}, std::array<int64_t, 3>{0, 0, 0}, {0, 7, 0}}) {
    c = make_case(rng, DType::f32, shape[0], shape[1], shape[2], Pattern::random);
    c.gates = shape[2];
    d = run_cuda(c, {});
    EXPECT_TRUE(d.fwd.ok()) << d.fwd.message;
    EXPECT_TRUE(d.bwd.ok()) << d.bwd.message;
  }
  // dim = 0 with a bad index is still reported.
  c = make_case(rng, DType::f16, 4, 0, 2, Pattern::random);
  c.index[1] = 2;
  d = run_cuda(c, {});
  EXPECT_EQ(d.fwd.kind, ErrorKind::index_out_of_range) << d.fwd.message;
}

}  // namespace
}  // namespace testing_cuda
}  // namespace gatecheck
