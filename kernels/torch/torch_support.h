// What the LibTorch eager implementations share: dtypes, tensor options on
// the caller's device, views of the caller's buffers, the fork guard, whether
// LibTorch has CUDA, and the exception fence of the C ABIs. Internal to
// kernels/torch: it includes <torch/torch.h>, so only the torch translation
// units may include it.
#pragma once

#include <cuda_runtime.h>
#include <torch/torch.h>
#include <unistd.h>

#include <exception>
#include <string>

#include "../op_contract.h"

namespace gatecheck::torch_support {

inline torch::ScalarType scalar_type(int32_t dtype) {
  switch (DType(dtype)) {
    case DType::f32: return torch::kFloat;
    case DType::f16: return torch::kHalf;
    case DType::bf16: return torch::kBFloat16;
  }
  return torch::kFloat;  // unreachable: check_problem rejected other values
}

// Tensor options for the caller's buffers on device d. On cuda, the buffers
// live on the runtime's current device.
inline torch::TensorOptions options(const gatecheck_problem& p, torch::ScalarType t) {
  auto o = torch::TensorOptions().dtype(t);
  if (p.device == GATECHECK_CUDA) {
    int dev = 0;
    cudaGetDevice(&dev);
    o = o.device(torch::kCUDA, dev);
  }
  return o;
}

// A view of a caller's buffer. from_blob never owns or frees it; the
// const_cast is safe because input views are only read (the runner's input
// snapshot checks that).
inline torch::Tensor wrap(const void* data, at::IntArrayRef shape, const torch::TensorOptions& o) {
  return torch::from_blob(const_cast<void*>(data), shape, o);
}

// Copies a result into the caller's output buffer of value's shape (skipped
// when empty, where the pointer may legally be null).
inline void store(void* dst, const torch::Tensor& value, const torch::TensorOptions& o) {
  if (value.numel() == 0) return;
  wrap(dst, value.sizes(), o).copy_(value);
}

// A forked child (call_isolated, or any caller's fork; --isolate itself runs
// torch-eager in a fresh process) has none of the parent's OpenMP threads,
// yet the OpenMP runtime still counts on them: the first parallel region
// would wait forever (seen with LibTorch 2.11 on 16 cores). So a process that
// is not the one that first used LibTorch here runs it on one thread. Inline:
// one owner for every translation unit of the process.
inline void single_threaded_after_fork() {
  static pid_t owner = ::getpid();
  if (::getpid() == owner) return;
  owner = ::getpid();
  at::set_num_threads(1);
}

// Whether this LibTorch runs on CUDA here; false where it cannot even ask.
inline bool torch_cuda_available() {
  try {
    return torch::cuda::is_available();
  } catch (...) {
    return false;
  }
}

// Runs f (returning a Status), turning any exception into an implementation
// error: no exception may cross a C ABI.
template <class F>
Status guarded(const char* op, F&& f) {
  try {
    single_threaded_after_fork();
    return f();
  } catch (const c10::Error& e) {
    return Status::error(ErrorKind::implementation, std::string(op) + ": LibTorch: " + e.what_without_backtrace());
  } catch (const std::exception& e) {
    return Status::error(ErrorKind::implementation, std::string(op) + ": " + e.what());
  } catch (...) {
    return Status::error(ErrorKind::implementation, std::string(op) + ": unknown exception");
  }
}

}  // namespace gatecheck::torch_support
