#include "gate_residual_cuda_workspace.h"

#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include "device_occupancy.cuh"
#include "gate_residual_cuda_status.h"

namespace gatecheck {
namespace cuda_detail {

namespace {
std::mutex g_mutex;
std::map<std::pair<int, cudaStream_t>, Workspace>& cache() {
  static auto* m = new std::map<std::pair<int, cudaStream_t>, Workspace>();  // outlives static dtors
  return *m;
}
}  // namespace

Workspace* workspace_for(cudaStream_t stream, cudaError_t* err) {
  int dev = 0;
  *err = cudaGetDevice(&dev);
  if (*err != cudaSuccess) return nullptr;
  std::lock_guard<std::mutex> lock(g_mutex);
  Workspace& w = cache()[{dev, stream}];
  if (!w.status) {
    // Cold path, once per stream: synchronous allocations and a clear, which a
    // stream being captured cannot take (global capture mode would refuse them
    // and invalidate the capture): say so instead.
    if (stream_capturing(stream)) {
      cache().erase({dev, stream});
      *err = cudaErrorStreamCaptureUnsupported;
      return nullptr;
    }
    *err = cudaMalloc(&w.status, sizeof *w.status);
    if (*err == cudaSuccess) *err = cudaMemset(w.status, 0, sizeof *w.status);
    if (*err == cudaSuccess) *err = cudaHostAlloc(&w.report, sizeof *w.report, cudaHostAllocMapped | cudaHostAllocPortable);
    if (*err == cudaSuccess) {
      std::memset(static_cast<void*>(w.report), 0, sizeof *w.report);
      *err = cudaHostGetDevicePointer(reinterpret_cast<void**>(&w.report_dev), w.report, 0);
    }
    if (*err == cudaSuccess) *err = cudaHostAlloc(&w.host_words, 2 * sizeof *w.host_words, cudaHostAllocPortable);
    if (*err == cudaSuccess) *err = cuda_occupancy::sm_count(&w.sm_count);
    if (*err != cudaSuccess) {
      if (w.status) cudaFree(w.status);
      if (w.report) cudaFreeHost(w.report);
      if (w.host_words) cudaFreeHost(w.host_words);
      cache().erase({dev, stream});
      return nullptr;
    }
  }
  return &w;
}

bool stream_capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &st) != cudaSuccess) {
    cudaGetLastError();  // e.g. the legacy stream while another stream captures: not this stream
    return false;
  }
  return st != cudaStreamCaptureStatusNone;
}

std::vector<cudaStream_t> workspace_streams() {
  std::vector<cudaStream_t> out;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return out;
  std::lock_guard<std::mutex> lock(g_mutex);
  for (const auto& [key, w] : cache())
    if (key.first == dev) out.push_back(key.second);
  return out;
}

Workspace* find_workspace(cudaStream_t stream) {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return nullptr;
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = cache().find({dev, stream});
  return it == cache().end() ? nullptr : &it->second;
}

cudaError_t release_workspace(cudaStream_t stream) {
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = cache().find({dev, stream});
  if (it == cache().end()) return cudaSuccess;
  Workspace& w = it->second;
  if (w.blob) e = cudaFreeAsync(w.blob, stream);  // stream-ordered, as it was allocated
  w.blob = nullptr;
  w.blob_bytes = 0;
  w.zeroed_counts = 0;
  const cudaError_t waited = cudaStreamSynchronize(stream);  // queued calls may still use the status word
  if (e == cudaSuccess) e = waited;
  if (waited == cudaSuccess) {
    const cudaError_t freed = cudaFree(w.status);
    if (e == cudaSuccess) e = freed;
    const cudaError_t freed_host = cudaFreeHost(w.report);
    if (e == cudaSuccess) e = freed_host;
    const cudaError_t freed_words = cudaFreeHost(w.host_words);
    if (e == cudaSuccess) e = freed_words;
    cache().erase(it);  // only once nothing queued can touch it
  }
  return e;
}

size_t workspace_count() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return cache().size();
}

cudaError_t begin_call(Workspace& w, cudaStream_t stream) {
  if (++w.epoch > cuda_status::kMaxEpoch) {
    w.epoch = 1;
    return cudaMemsetAsync(w.status, 0, sizeof *w.status, stream);
  }
  return cudaSuccess;
}

cudaError_t reserve_blob(Workspace& w, size_t bytes, cudaStream_t stream) {
  if (bytes <= w.blob_bytes) return cudaSuccess;
  if (stream_capturing(stream)) return cudaErrorStreamCaptureUnsupported;
  if (w.blob) {
    cudaError_t e = cudaFreeAsync(w.blob, stream);
    w.blob = nullptr;
    w.blob_bytes = 0;
    if (e != cudaSuccess) return e;
  }
  const size_t grown = bytes + bytes / 4;  // headroom so slowly growing shapes do not reallocate each call
  cudaError_t e = cudaMallocAsync(&w.blob, grown, stream);
  if (e != cudaSuccess) return e;
  w.blob_bytes = grown;
  w.zeroed_counts = 0;
  return cudaSuccess;
}

}  // namespace cuda_detail
}  // namespace gatecheck
