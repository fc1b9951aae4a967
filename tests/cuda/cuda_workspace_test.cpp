// The per-stream workspace: released with its stream, and a stream that comes
// back (or a new one at the same address) starts afresh and still computes
// bit for bit what the host twin does.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <random>

#include "cuda_runs.h"
#include "kernels/cuda/gate_residual_cuda.h"
#include "kernels/cuda/gate_residual_cuda_workspace.h"
#include "tests/gpu.h"

namespace gatecheck {
namespace testing_cuda {
namespace {

size_t free_device_bytes() {
  size_t free_b = 0, total = 0;
  EXPECT_EQ(cudaMemGetInfo(&free_b, &total), cudaSuccess);
  return free_b;
}

TEST(CudaWorkspace, ReleaseFreesTheStreamsStateAndALaterCallStartsAfresh) {
  GATECHECK_REQUIRE_GPU();
  std::mt19937_64 rng(31);
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  EXPECT_TRUE(gate_residual_cuda_release_stream(s).ok());  // never used: nothing to do
  const size_t before = cuda_detail::workspace_count();
  const RawCase c = make_case(rng, DType::bf16, 3000, 40, 2500, Pattern::random);  // the CUB plan: a large blob
  CudaPlacement on_s;
  on_s.stream = s;
  const RawOutputs host = run_host(c);
  EXPECT_EQ(compare_outputs(c, run_cuda(c, on_s), host), "");
  EXPECT_EQ(cuda_detail::workspace_count(), before + 1);
  EXPECT_NE(gate_residual_cuda_status_ref(s).word, nullptr);
  const Status r = gate_residual_cuda_release_stream(s);
  EXPECT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(cuda_detail::workspace_count(), before);
  EXPECT_EQ(gate_residual_cuda_status_ref(s).word, nullptr);
  // The same stream again: a fresh workspace, the same bits as the host twin.
  EXPECT_EQ(compare_outputs(c, run_cuda(c, on_s), host), "");
  EXPECT_EQ(cuda_detail::workspace_count(), before + 1);
  EXPECT_TRUE(gate_residual_cuda_release_stream(s).ok());
  cudaStreamDestroy(s);
}

// The memory a stream's workspace holds comes back when it is released: four
// streams with large backward scratch each (the CUB plan over 4M rows) hold
// at least half their blobs' bytes until released (the check can fail), and
// after the release device memory is back within 64 MiB of where it was.
TEST(CudaWorkspace, ReleasedStreamsGiveTheirMemoryBack) {
  GATECHECK_REQUIRE_GPU();
  std::mt19937_64 rng(32);
  const RawCase c = make_case(rng, DType::f16, int64_t(1) << 22, 1, 3000, Pattern::random);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const size_t start = free_device_bytes(), count = cuda_detail::workspace_count();
  cudaStream_t streams[4] = {};
  size_t blobs = 0;
  for (cudaStream_t& s : streams) {
    ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
    CudaPlacement on_s;
    on_s.stream = s;
    const RawOutputs o = run_cuda(c, on_s);
    ASSERT_TRUE(o.fwd.ok() && o.bwd.ok()) << o.fwd.message << o.bwd.message;
    ASSERT_NE(cuda_detail::find_workspace(s), nullptr);
    blobs += cuda_detail::find_workspace(s)->blob_bytes;
  }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const size_t held = free_device_bytes();
  EXPECT_GE(blobs, size_t(128) << 20) << "the case no longer needs much scratch: the check below is weak";
  EXPECT_GE(start > held ? start - held : 0, blobs / 2) << "the streams' scratch did not show in free memory";
  for (cudaStream_t s : streams) {
    const Status r = gate_residual_cuda_release_stream(s);
    EXPECT_TRUE(r.ok()) << r.message;
    cudaStreamDestroy(s);
  }
  EXPECT_EQ(cuda_detail::workspace_count(), count);
  const size_t end = free_device_bytes();
  EXPECT_LE(start > end ? start - end : 0, size_t(64) << 20)
      << "device memory still " << (start - end) / (1 << 20) << " MiB below the start after the release";
}

}  // namespace
}  // namespace testing_cuda
}  // namespace gatecheck
