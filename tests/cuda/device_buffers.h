// Test helpers: a device buffer with an optional misalignment, and bitwise
// comparison of raw element bits with a message a person can act on.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gatecheck {
namespace testing_cuda {

// `bytes` of device memory starting `offset` bytes past a 256-aligned base.
class DeviceBuffer {
 public:
  DeviceBuffer(size_t bytes, size_t offset = 0);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return bytes_ ? static_cast<char*>(base_) + offset_ : nullptr; }
  void upload(const void* host);
  void download(void* host) const;
  void fill(uint8_t byte);

 private:
  void* base_ = nullptr;
  size_t bytes_, offset_;
};

// Empty string when equal bit for bit; otherwise "<tensor>: N of M elements differ;
// first at [row, col]: cuda 0x.. vs host 0x..".
std::string compare_bits(const char* tensor, const std::vector<uint32_t>& cuda,
                         const std::vector<uint32_t>& host, int64_t cols);

}  // namespace testing_cuda
}  // namespace gatecheck
