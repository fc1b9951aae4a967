// The per-stream workspace: released with its stream, and a stream that comes
// back (or a new one at the same address) starts afresh and still computes
// bit for bit what the host twin does.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <random>

#include "cuda_runs.h"
#include "kernels/cuda/gate_residual_cuda.h"
#include "kernels/cuda/gate_residual_cuda_workspace.h"
#include "tests/gpu.h"

namespace gatecheck {
namespace testing_cuda {
namespace {

// What this process holds of the device's current memory pool, from which the
// workspace's blobs come (cudaMallocAsync on the stream): bytes handed out
// (used) and bytes the pool holds from the device (reserved). Both count this
// process's allocations only; cudaMemGetInfo's free memory is the device's,
// which any other process changes (another GPU test beside this one under
// ctest -j 2 did, and failed it).
struct PoolBytes {
  uint64_t used = 0, reserved = 0;
};

PoolBytes pool_bytes() {
  int dev = 0;
  EXPECT_EQ(cudaGetDevice(&dev), cudaSuccess);
  cudaMemPool_t pool = nullptr;
  EXPECT_EQ(cudaDeviceGetMemPool(&pool, dev), cudaSuccess);
  PoolBytes b;
  EXPECT_EQ(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &b.used), cudaSuccess);
  EXPECT_EQ(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &b.reserved), cudaSuccess);
  return b;
}

uint64_t above(uint64_t now, uint64_t start) { return now > start ? now - start : 0; }

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
// their blobs' bytes in the device's memory pool until released (the check
// can fail), and after the release the pool hands out no more than at the
// start (the blobs were freed) and holds within 64 MiB of what it held then
// (the memory went back to the device, not only to the pool). Measured on the
// pool this process allocates from, not as the device's free memory, which
// other processes change.
TEST(CudaWorkspace, ReleasedStreamsGiveTheirMemoryBack) {
  GATECHECK_REQUIRE_GPU();
  std::mt19937_64 rng(32);
  const RawCase c = make_case(rng, DType::f16, int64_t(1) << 22, 1, 3000, Pattern::random);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const PoolBytes start = pool_bytes();
  const size_t count = cuda_detail::workspace_count();
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
  const PoolBytes held = pool_bytes();
  EXPECT_GE(blobs, size_t(128) << 20) << "the case no longer needs much scratch: the checks below are weak";
  EXPECT_GE(above(held.used, start.used), blobs) << "the streams' scratch did not show in the pool's used bytes";
  EXPECT_GE(above(held.reserved, start.reserved), blobs / 2)
      << "the streams' scratch did not show in what the pool holds from the device";
  for (cudaStream_t s : streams) {
    const Status r = gate_residual_cuda_release_stream(s);
    EXPECT_TRUE(r.ok()) << r.message;
    cudaStreamDestroy(s);
  }
  EXPECT_EQ(cuda_detail::workspace_count(), count);
  const PoolBytes end = pool_bytes();
  EXPECT_LE(end.used, start.used) << "the pool still hands out " << above(end.used, start.used) / (1 << 20)
                                  << " MiB more than at the start after the release";
  EXPECT_LE(above(end.reserved, start.reserved), uint64_t(64) << 20)
      << "the pool still holds " << above(end.reserved, start.reserved) / (1 << 20)
      << " MiB more than at the start after the release: freed to the pool, not given back to the device";
}

}  // namespace
}  // namespace testing_cuda
}  // namespace gatecheck
