// Per (device, stream) state of the CUDA kernels: the index status word with
// its epoch, the report a failed call leaves for callers that do not
// synchronise (pinned host memory, mapped), and one scratch blob for the
// backward's index plan, grown on demand with stream-ordered allocation (never
// freed while queued work uses it, never allocated per call once large enough).
// Nothing is allocated while the stream is being captured into a CUDA graph:
// such a call fails with a message that says so.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "gate_residual_cuda_status.h"

namespace gatecheck {
namespace cuda_detail {

struct Workspace {
  unsigned long long* status = nullptr;  // own allocation, never moves
  unsigned long long epoch = 0;          // epoch of the most recent call
  cuda_status::Report* report = nullptr;      // host address (cudaHostAlloc, mapped)
  cuda_status::Report* report_dev = nullptr;  // the same, as the device sees it
  // Pinned host words a synchronising caller copies the status word and a bad
  // index into, on the stream: a plain cudaMemcpy would go through the legacy
  // stream, which every thread's copies share, and serialise the threads.
  unsigned long long* host_words = nullptr;  // [2], cudaHostAlloc
  void* blob = nullptr;
  size_t blob_bytes = 0;
  int sm_count = 0;
  // Leading per-gate counters in the blob known to be zero (the backward's
  // histogram starts from zero and its plan step zeroes what it used).
  int64_t zeroed_counts = 0;
  // The backward's blob layout for the last (rows, gates, dim), so that the
  // CUB size queries run once per shape, not per call.
  int64_t layout_key[3] = {-1, -1, -1};
  std::shared_ptr<void> layout;
};

// The workspace of the current device and `stream`; creates it on first use.
// Returns null and sets *err on a CUDA failure.
Workspace* workspace_for(cudaStream_t stream, cudaError_t* err);
// Looks it up without creating it (null when no call ran on that stream).
Workspace* find_workspace(cudaStream_t stream);
// The streams with a workspace on the current device.
std::vector<cudaStream_t> workspace_streams();

// True when `stream` is being captured into a CUDA graph (a query that is
// itself allowed during capture).
bool stream_capturing(cudaStream_t stream);

// Frees the workspace of the current device and `stream` (none: nothing to
// do) once the work queued on the stream has finished.
cudaError_t release_workspace(cudaStream_t stream);
// Workspaces alive, over all devices and streams (for tests).
size_t workspace_count();

// Starts a call: advances the epoch (clearing the word when it wraps).
cudaError_t begin_call(Workspace& w, cudaStream_t stream);

// Makes the blob at least `bytes` long, on `stream`. While the stream is being
// captured, a blob that would have to grow is cudaErrorStreamCaptureUnsupported
// (a graph's allocation would be freed and made again at each launch).
cudaError_t reserve_blob(Workspace& w, size_t bytes, cudaStream_t stream);

}  // namespace cuda_detail
}  // namespace gatecheck
