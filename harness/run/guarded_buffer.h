// A buffer on the host or a CUDA device with canary regions before and after
// it, so a write outside the buffer is seen after the call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "../../kernels/gate_residual.h"

namespace gatecheck {

constexpr size_t kGuardBytes = 256;
constexpr uint8_t kCanaryByte = 0xA7;

class GuardedBuffer {
 public:
  GuardedBuffer(Device d, size_t bytes);
  ~GuardedBuffer();
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  // The user region: nullptr-free even for 0 bytes, so empty problems still
  // get valid pointers.
  void* ptr() const { return base_ + kGuardBytes; }
  size_t size() const { return bytes_; }
  void upload(const void* host);                 // copies size() bytes in
  void download(void* host) const;               // copies size() bytes out
  void fill(const std::vector<uint8_t>& pattern);  // repeat pattern over the region
  // Offsets (relative to ptr(), negative before it) of the first and last
  // canary bytes that changed, and how many changed; 0 if intact.
  size_t damaged_guard_bytes(int64_t* first, int64_t* last) const;

 private:
  Device device_;
  size_t bytes_;
  uint8_t* base_ = nullptr;
};

// Synchronise the current CUDA device and turn any pending error into a
// Status (kind implementation). On the CPU, a no-op.
Status device_sync(Device d);
// The same for one CUDA stream (a cudaStream_t) of the current device.
Status stream_sync(void* stream);

}  // namespace gatecheck
