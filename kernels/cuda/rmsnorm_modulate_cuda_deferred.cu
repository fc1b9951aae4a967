// rmsnorm_modulate's kernels for callers that never wait for the GPU: the
// caller's scratch, and a bad index raised later through the stream's index
// status and report, shared with gate_residual's kernels (one mechanism for
// every op: gate_residual_cuda_report.cpp takes the reports).
#include <cuda_runtime.h>

#include <string>

#include "cuda_error_status.h"
#include "gate_residual_cuda_device.cuh"
#include "gate_residual_cuda_workspace.h"
#include "rmsnorm_modulate_cuda.h"

namespace gatecheck {

using namespace cuda_detail;

namespace {

constexpr size_t kBadWordBytes = 256;  // the bad-row word, padded: the backward's scratch stays 256-byte aligned

// After the call's kernels: its bad row, if any, into the stream's status
// word (under the call's epoch) and report, as gate_residual's failed calls
// leave them. One thread.
__global__ void report_bad_row_kernel(const unsigned long long* bad, const int64_t* index, int64_t gates,
                                      unsigned long long* status, unsigned long long epoch,
                                      cuda_status::Report* report, int32_t by, const char* op) {
  const unsigned long long row = *bad;
  if (row == ~0ull) return;
  record_bad(status, epoch, int64_t(row));
  report_failed_call(report, cuda_status::encode(epoch, int64_t(row)), index[row], gates, by, op);
}

Status failure(const char* op, const std::string& what) {
  return Status::error(ErrorKind::implementation, std::string(op) + ": " + what);
}

// The call's bad row, if any, into the stream's status and report, after its kernels.
Status record_bad_row(const OpCall& c, const Workspace& w, const unsigned long long* bad, const char* op) {
  report_bad_row_kernel<<<1, 1, 0, static_cast<cudaStream_t>(c.p.stream)>>>(
      bad, c.index(), c.p.gates, w.status, w.epoch, w.report_dev,
      c.pass == Pass::forward ? cuda_status::kReportedByForward : cuda_status::kReportedByBackward, op);
  const cudaError_t e = cudaGetLastError();
  return cuda_error_status(op, " in the bad row's report", e);
}

}  // namespace

int64_t rmsnorm_modulate_cuda_deferred_scratch_bytes(const OpCall& c) {
  return int64_t(kBadWordBytes) +
         (c.pass == Pass::backward ? rmsnorm_modulate_cuda_bwd_scratch_bytes(c.p.rows, c.p.dim, c.p.gates) : 0);
}

namespace {

// The stream's state for a call that records its bad row there (*w), its epoch begun.
Status begin_deferred(const OpCall& c, const char* op, Workspace** w) {
  if (c.p.rows > cuda_status::kMaxRows)
    return Status::error(ErrorKind::size_overflow, std::string(op) + ": rows exceed the index status's limit");
  const auto s = static_cast<cudaStream_t>(c.p.stream);
  cudaError_t e;
  *w = workspace_for(s, &e);
  if (!*w)
    return e == cudaErrorStreamCaptureUnsupported
               ? failure(op, "the stream is being captured into a CUDA graph and this is the first call on the stream "
                             "(it allocates the stream's state), which needs an allocation: call it once on this "
                             "stream before capturing")
               : cuda_error_status(op, " in the stream's state", e);
  if ((e = begin_call(**w, s)) != cudaSuccess) return cuda_error_status(op, " in beginning the call", e);
  return Status::success();
}

}  // namespace

Status rmsnorm_modulate_cuda_run_deferred(const OpCall& c, void* scratch, const char* op) {
  Workspace* w = nullptr;
  Status st = begin_deferred(c, op, &w);
  if (!st.ok()) return st;
  auto* bad = static_cast<unsigned long long*>(scratch);
  st = rmsnorm_modulate_cuda_run(c, bad, static_cast<char*>(scratch) + kBadWordBytes);
  if (!st.ok()) return st;
  return record_bad_row(c, *w, bad, op);
}

Status rmsnorm_modulate_cuda_defer_bad_row(const OpCall& c, const unsigned long long* bad, const char* op) {
  Workspace* w = nullptr;
  const Status st = begin_deferred(c, op, &w);
  return st.ok() ? record_bad_row(c, *w, bad, op) : st;
}

}  // namespace gatecheck
