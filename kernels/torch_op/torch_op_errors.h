// What the LibTorch ops share about errors (included by the ops' .cpp files
// only: it brings in c10): the dtype as the kernels name it, a kernel status
// raised as a c10::Error, checked mode, and the index errors that the
// kernels' calls leave on a stream without a host sync. Every op's kernels
// on a stream share one index status and report (gate_residual_cuda.h), so
// a bad index is raised by the next call of any of the ops on that stream,
// or by check_errors(), in words that name the op that found it.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>
#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>

#include "../cuda/gate_residual_cuda.h"

namespace gatecheck {
namespace torch_op {

// The name that reports of gate_residual's kernels carry (other ops' kernels
// name their own op in their reports).
constexpr const char* kGateResidualOp = "gatecheck::gate_residual";

// GATECHECK_OP_CHECKED=1 (read at the first call): every call waits and
// raises its own error.
inline bool checked_mode() {
  static const bool on = [] {
    const char* v = std::getenv("GATECHECK_OP_CHECKED");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return on;
}

inline int32_t abi_dtype(const char* op, const at::Tensor& t) {
  switch (t.scalar_type()) {
    case at::kFloat: return GATECHECK_F32;
    case at::kHalf: return GATECHECK_F16;
    case at::kBFloat16: return GATECHECK_BF16;
    default: TORCH_CHECK(false, op, ": dtype ", t.scalar_type(), " is not bf16, fp16 or fp32");
  }
  return -1;
}

// A kernel status as a c10::Error; while the stream is being captured, with
// how to get the op's first call out of the capture.
inline void check(const Status& s, void* stream) {
  if (s.ok()) return;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  const bool capturing = cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &capture) == cudaSuccess &&
                         capture != cudaStreamCaptureStatusNone;
  TORCH_CHECK(false, s.message,
              capturing ? " (in PyTorch: run the model once on the stream that captures it, e.g. warm up under "
                          "torch.cuda.stream(s) and capture with torch.cuda.graph(g, stream=s))"
                        : "");
}

// Before a call: an earlier call's index error on this stream, if the device
// has reported one (a host memory read, no CUDA call).
inline void raise_pending(void* stream) { check(gate_residual_cuda_take_report(kGateResidualOp, stream), stream); }

// After a call in checked mode (or where the call can leave no report):
// wait, and raise its own error.
inline void raise_own(const char* what, const gatecheck_problem& p, const int64_t* index) {
  check(gate_residual_cuda_sync_status(what, p, index), p.stream);
}

}  // namespace torch_op
}  // namespace gatecheck
