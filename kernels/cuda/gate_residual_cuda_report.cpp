// Index errors without a host sync: the reports that failed calls leave in
// pinned host memory (cuda_status::Report), taken and turned into messages.
#include <cuda_runtime.h>

#include <cinttypes>
#include <cstdio>

#include "gate_residual_cuda.h"
#include "gate_residual_cuda_workspace.h"

namespace gatecheck {

using namespace cuda_detail;

namespace {

Status cuda_error(const char* op, const char* what, cudaError_t e) {
  char buf[384];
  std::snprintf(buf, sizeof buf, "%s: CUDA error %s: %s: %s", op, what, cudaGetErrorName(e), cudaGetErrorString(e));
  return Status::error(ErrorKind::implementation, buf);
}

// The report's error, the report emptied (one taker wins when threads race);
// success when it holds none. clear_word(w) then clears the status word.
template <class ClearWord>
Status take(const char* op, Workspace& w, ClearWord clear_word) {
  cuda_status::Report& r = *w.report;
  if (__atomic_load_n(&r.filled, __ATOMIC_ACQUIRE) == 0) return Status::success();
  const unsigned long long word = r.word;
  const long long value = r.value, gates = r.gates;
  if (r.op) op = r.op;  // another op's kernels failed: the message names that op
  const char* by = r.by == cuda_status::kReportedByForward ? "forward" : "backward";
  if (__atomic_exchange_n(&r.filled, 0, __ATOMIC_ACQ_REL) == 0) return Status::success();  // another thread took it
  clear_word(w);
  const int64_t row = cuda_status::decode_row(word);
  char buf[512];
  if (value < 0 || value >= gates)
    std::snprintf(buf, sizeof buf,
                  "%s: index[%" PRId64 "] = %lld is out of range [0, %lld) (gates = %lld): found on the device by an "
                  "earlier %s on this stream, which wrote nothing",
                  op, row, value, gates, gates, by);
  else  // a CUDA graph's launch whose status word was left from an earlier launch of it, not yet taken
    std::snprintf(buf, sizeof buf,
                  "%s: index[%" PRId64 "] was out of range [0, %lld) (gates = %lld) in an earlier launch of a CUDA "
                  "graph on this stream (it holds %lld now); the %s of that launch, and of its launches until now, "
                  "wrote nothing",
                  op, row, gates, gates, value, by);
  return Status::error(ErrorKind::index_out_of_range, buf);
}

}  // namespace

Status gate_residual_cuda_take_report(const char* op, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  Workspace* w = find_workspace(s);
  if (!w || !w->report) return Status::success();
  return take(op, *w, [s](Workspace& ws) {
    if (!stream_capturing(s)) cudaMemsetAsync(ws.status, 0, sizeof *ws.status, s);
  });
}

Status gate_residual_cuda_wait_and_take_reports(const char* op) {
  const std::vector<cudaStream_t> streams = workspace_streams();
  if (streams.empty()) return Status::success();  // no call ran on this device: nothing to wait for
  cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e != cudaSuccess) return cuda_error(op, "(found at synchronisation)", e);
  Status first;
  for (cudaStream_t s : streams) {
    Workspace* w = find_workspace(s);
    if (!w || !w->report) continue;
    // Every stream is idle: a synchronous clear (the stream itself may be gone).
    Status st = take(op, *w, [](Workspace& ws) { cudaMemset(ws.status, 0, sizeof *ws.status); });
    if (first.ok() && !st.ok()) first = st;
  }
  return first;
}

}  // namespace gatecheck
