// cuda_error_status: every kernel's host side words a CUDA error one way, and
// passes success through. (No GPU needed: the runtime names its errors.)
#include <gtest/gtest.h>

#include "kernels/cuda/cuda_error_status.h"

namespace gatecheck {
namespace {

TEST(CudaErrorStatus, NamesWhoWhereAndTheError) {
  const Status s = cuda_error_status("gate_residual_bwd", " in launch", cudaErrorInvalidValue);
  EXPECT_EQ(s.kind, ErrorKind::implementation);
  EXPECT_EQ(s.message, std::string("gate_residual_bwd: CUDA error in launch: cudaErrorInvalidValue: ") +
                           cudaGetErrorString(cudaErrorInvalidValue));
  EXPECT_EQ(cuda_error_status("rmsnorm_modulate_fwd", "", cudaErrorMemoryAllocation).message.rfind(
                "rmsnorm_modulate_fwd: CUDA error: cudaErrorMemoryAllocation: ", 0),
            0u);
}

TEST(CudaErrorStatus, SuccessPassesThrough) {
  EXPECT_TRUE(cuda_error_status("gate_residual_fwd", " in launch", cudaSuccess).ok());
}

}  // namespace
}  // namespace gatecheck
