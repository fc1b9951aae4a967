#include "guarded_buffer.h"

#include <cuda_runtime.h>

#include <cstring>
#include <stdexcept>
#include <string>

namespace gatecheck {

namespace {
void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(e));
}
}  // namespace

GuardedBuffer::GuardedBuffer(Device d, size_t bytes) : device_(d), bytes_(bytes) {
  const size_t total = bytes + 2 * kGuardBytes;
  std::vector<uint8_t> canary(total, kCanaryByte);
  if (d == Device::cpu) {
    base_ = new uint8_t[total];
    std::memcpy(base_, canary.data(), total);
  } else {
    void* p = nullptr;
    cuda_check(cudaMalloc(&p, total), "cudaMalloc");
    base_ = static_cast<uint8_t*>(p);
    cuda_check(cudaMemcpy(base_, canary.data(), total, cudaMemcpyHostToDevice), "cudaMemcpy (canary)");
  }
}

GuardedBuffer::~GuardedBuffer() {
  if (device_ == Device::cpu) delete[] base_;
  else cudaFree(base_);
}

void GuardedBuffer::upload(const void* host) {
  if (bytes_ == 0) return;
  if (device_ == Device::cpu) std::memcpy(ptr(), host, bytes_);
  else cuda_check(cudaMemcpy(ptr(), host, bytes_, cudaMemcpyHostToDevice), "cudaMemcpy (upload)");
}

void GuardedBuffer::download(void* host) const {
  if (bytes_ == 0) return;
  if (device_ == Device::cpu) std::memcpy(host, ptr(), bytes_);
  else cuda_check(cudaMemcpy(host, ptr(), bytes_, cudaMemcpyDeviceToHost), "cudaMemcpy (download)");
}

void GuardedBuffer::fill(const std::vector<uint8_t>& pattern) {
  if (bytes_ == 0 || pattern.empty()) return;
  std::vector<uint8_t> img(bytes_);
  for (size_t i = 0; i < bytes_; ++i) img[i] = pattern[i % pattern.size()];
  upload(img.data());
}

size_t GuardedBuffer::damaged_guard_bytes(int64_t* first, int64_t* last) const {
  const size_t total = bytes_ + 2 * kGuardBytes;
  std::vector<uint8_t> img(total);
  if (device_ == Device::cpu) std::memcpy(img.data(), base_, total);
  else cuda_check(cudaMemcpy(img.data(), base_, total, cudaMemcpyDeviceToHost), "cudaMemcpy (guards)");
  size_t n = 0;
  *first = *last = 0;
  auto scan = [&](size_t from, size_t to) {
    for (size_t i = from; i < to; ++i)
      if (img[i] != kCanaryByte) {
        const int64_t off = int64_t(i) - int64_t(kGuardBytes);
        if (n == 0) *first = off;
        *last = off;
        ++n;
      }
  };
  scan(0, kGuardBytes);
  scan(kGuardBytes + bytes_, total);
  return n;
}

namespace {

// A synchronisation's result, or the error pending after it, as a Status.
Status status_after_call(cudaError_t e) {
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e != cudaSuccess)
    return Status::error(ErrorKind::implementation,
                         std::string("CUDA error after the call: ") + cudaGetErrorName(e) + ": " +
                             cudaGetErrorString(e));
  return Status::success();
}

}  // namespace

Status device_sync(Device d) {
  if (d == Device::cpu) return Status::success();
  return status_after_call(cudaDeviceSynchronize());
}

Status stream_sync(void* stream) {
  return status_after_call(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
}

}  // namespace gatecheck
