#include "device_buffers.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <stdexcept>

namespace gatecheck {
namespace testing_cuda {

namespace {
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

template <class U>
std::string compare(const char* tensor, const std::vector<U>& cuda, const std::vector<U>& host,
                    int64_t cols) {
  if (cuda.size() != host.size()) return std::string(tensor) + ": sizes differ";
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < cuda.size(); ++i)
    if (cuda[i] != host[i] && bad++ == 0) first = i;
  if (!bad) return "";
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s: %zu of %zu elements differ; first at [%lld, %lld]: cuda 0x%0*llx vs host 0x%0*llx",
                tensor, bad, cuda.size(), (long long)(first / size_t(cols)), (long long)(first % size_t(cols)),
                8, (unsigned long long)cuda[first], 8,
                (unsigned long long)host[first]);
  return buf;
}
}  // namespace

DeviceBuffer::DeviceBuffer(size_t bytes, size_t offset) : bytes_(bytes), offset_(offset) {
  if (bytes_) check(cudaMalloc(&base_, bytes_ + offset_), "cudaMalloc");
}
DeviceBuffer::~DeviceBuffer() {
  if (base_) cudaFree(base_);
}
void DeviceBuffer::upload(const void* host) {
  if (bytes_) check(cudaMemcpy(get(), host, bytes_, cudaMemcpyHostToDevice), "upload");
}
void DeviceBuffer::download(void* host) const {
  if (bytes_) check(cudaMemcpy(host, get(), bytes_, cudaMemcpyDeviceToHost), "download");
}
void DeviceBuffer::fill(uint8_t byte) {
  if (bytes_) check(cudaMemset(get(), byte, bytes_), "fill");
}

std::string compare_bits(const char* t, const std::vector<uint32_t>& c, const std::vector<uint32_t>& h,
                         int64_t cols) {
  return compare(t, c, h, cols);
}

}  // namespace testing_cuda
}  // namespace gatecheck
