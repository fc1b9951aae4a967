// Memory on an implementation's device, and row-wise copies and bitwise
// comparisons done there: the batch runner cuts thousands of sub-batches out
// of batches of up to 131072 x 5376 and compares their outputs, which through
// the host would move tens of gigabytes per implementation. On the CPU the
// same calls are memcpy and memcmp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "../../kernels/gate_residual.h"

namespace gatecheck {

// Bytes on a device (host memory for Device::cpu), freed with the object.
// Throws std::runtime_error (naming the CUDA error) when it cannot allocate.
class DeviceBytes {
 public:
  DeviceBytes() = default;
  DeviceBytes(Device d, size_t bytes);
  ~DeviceBytes();
  DeviceBytes(DeviceBytes&& o) noexcept;
  DeviceBytes& operator=(DeviceBytes&& o) noexcept;
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;

  // Never null, even for 0 bytes: an empty problem still gets valid pointers.
  void* get() const { return ptr_; }
  template <class T>
  T* as() const { return static_cast<T*>(ptr_); }
  size_t size() const { return bytes_; }
  Device device() const { return device_; }
  void upload(const void* host, size_t bytes, size_t offset = 0);
  void download(void* host, size_t bytes, size_t offset = 0) const;
  void fill(uint8_t byte) { fill(byte, bytes_); }
  void fill(uint8_t byte, size_t first_bytes);  // the first `first_bytes` only

 private:
  Device device_ = Device::cpu;
  size_t bytes_ = 0;
  void* ptr_ = nullptr;
};

// dst row i = src row rows[i], rows of row_bytes bytes, on device d (both
// pointers there). A contiguous run of rows is one copy.
void gather_rows(Device d, void* dst, const void* src, const std::vector<int64_t>& rows, size_t row_bytes);

// Row i of a against row i of b, for n rows of row_bytes bytes on device d:
// the first byte offset in the row whose bits differ, or -1 where the rows
// are identical.
std::vector<int64_t> first_differing_bytes(Device d, const void* a, const void* b, int64_t n, size_t row_bytes);

// Copies bytes between two pointers of device d.
void copy_on_device(Device d, void* dst, const void* src, size_t bytes);
// Copies bytes from a pointer of device d (anywhere in an allocation) to the host.
void read_bytes(Device d, void* host, const void* src, size_t bytes);

}  // namespace gatecheck
