// Index errors turned into messages: with a host sync (the stream's status word
// read back, gate_residual_cuda_sync_status), or without one (the reports that
// failed calls leave in pinned host memory, cuda_status::Report, taken).
#include <cuda_runtime.h>

#include <cinttypes>
#include <cstdio>

#include "gate_residual_cuda.h"
#include "cuda_error_status.h"
#include "gate_residual_cuda_workspace.h"

namespace gatecheck {

using namespace cuda_detail;

namespace {

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
  if (e != cudaSuccess) return cuda_error_status(op, " (found at synchronisation)", e);
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

CudaStatusRef gate_residual_cuda_status_ref(void* stream) {
  CudaStatusRef r;
  if (Workspace* w = find_workspace(static_cast<cudaStream_t>(stream))) {
    r.word = w->status;
    r.epoch = w->epoch;
  }
  return r;
}

bool cuda_status_bad_row(unsigned long long word, unsigned long long epoch, int64_t* row) {
  if (epoch == 0 || !cuda_status::is_bad(word, epoch)) return false;
  *row = cuda_status::decode_row(word);
  return true;
}

Status gate_residual_cuda_sync_status(const char* op, const gatecheck_problem& p,
                                      const int64_t* index) {
  const auto s = static_cast<cudaStream_t>(p.stream);
  Workspace* w = find_workspace(s);
  cudaError_t e = cudaSuccess;
  // The status word comes back on the stream itself, into pinned memory, with
  // the one wait: threads on their own streams never wait for each other here.
  if (w) e = cudaMemcpyAsync(&w->host_words[0], w->status, sizeof *w->status, cudaMemcpyDeviceToHost, s);
  if (e == cudaSuccess) e = cudaStreamSynchronize(s);
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e != cudaSuccess) return cuda_error_status(op, " in the call (found at synchronisation)", e);
  if (!w) return Status::success();  // no call ran on this stream
  const unsigned long long word = w->host_words[0];
  int64_t row = -1;
  if (!cuda_status_bad_row(word, w->epoch, &row)) return Status::success();
  // This error is reported here: its report, if the call left one, is taken.
  if (w->report && w->report->filled && w->report->word == word)
    __atomic_store_n(&w->report->filled, 0, __ATOMIC_RELEASE);
  if ((e = cudaMemcpyAsync(&w->host_words[1], index + row, sizeof(int64_t), cudaMemcpyDeviceToHost, s)) != cudaSuccess ||
      (e = cudaStreamSynchronize(s)) != cudaSuccess)
    return cuda_error_status(op, " in reading the bad index", e);
  const int64_t value = int64_t(w->host_words[1]);
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%s: index[%" PRId64 "] = %" PRId64 " is out of range [0, %" PRId64 ") (gates = %" PRId64
                "); found on the device, nothing was written",
                op, row, value, p.gates, p.gates);
  return Status::error(ErrorKind::index_out_of_range, buf);
}

}  // namespace gatecheck
