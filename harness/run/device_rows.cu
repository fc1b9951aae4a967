#include "device_rows.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace gatecheck {

namespace {

void cuda_ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(e));
}

// Host buffers are aligned as a fresh device allocation is, so that an
// implementation's vector paths see the same alignment on both devices.
constexpr size_t kAlign = 256;

// The widest word that divides the row and both base addresses.
int word_bytes(const void* a, const void* b, size_t row_bytes) {
  const auto pa = reinterpret_cast<uintptr_t>(a), pb = reinterpret_cast<uintptr_t>(b);
  for (int w : {16, 8, 4, 2})
    if (row_bytes % size_t(w) == 0 && pa % uintptr_t(w) == 0 && pb % uintptr_t(w) == 0) return w;
  return 1;
}

template <int W>
struct Word;
template <> struct Word<16> { using T = uint4; };
template <> struct Word<8> { using T = uint2; };
template <> struct Word<4> { using T = uint32_t; };
template <> struct Word<2> { using T = uint16_t; };
template <> struct Word<1> { using T = uint8_t; };

template <int W>
__global__ void gather_kernel(uint8_t* dst, const uint8_t* src, const int64_t* rows, int64_t n, size_t row_bytes) {
  using T = typename Word<W>::T;
  const size_t words = row_bytes / W;
  for (int64_t i = blockIdx.x; i < n; i += gridDim.x) {
    const T* s = reinterpret_cast<const T*>(src + size_t(rows[i]) * row_bytes);
    T* d = reinterpret_cast<T*>(dst + size_t(i) * row_bytes);
    for (size_t k = threadIdx.x; k < words; k += blockDim.x) d[k] = s[k];
  }
}

__device__ bool same(uint4 x, uint4 y) { return x.x == y.x && x.y == y.y && x.z == y.z && x.w == y.w; }
__device__ bool same(uint2 x, uint2 y) { return x.x == y.x && x.y == y.y; }
__device__ bool same(uint32_t x, uint32_t y) { return x == y; }
__device__ bool same(uint16_t x, uint16_t y) { return x == y; }
__device__ bool same(uint8_t x, uint8_t y) { return x == y; }

template <int W>
__global__ void differ_kernel(const uint8_t* a, const uint8_t* b, int64_t n, size_t row_bytes,
                              unsigned long long* first) {
  using T = typename Word<W>::T;
  const size_t words = row_bytes / W;
  for (int64_t i = blockIdx.x; i < n; i += gridDim.x) {
    const T* x = reinterpret_cast<const T*>(a + size_t(i) * row_bytes);
    const T* y = reinterpret_cast<const T*>(b + size_t(i) * row_bytes);
    for (size_t k = threadIdx.x; k < words; k += blockDim.x) {
      if (same(x[k], y[k])) continue;
      const uint8_t* bx = reinterpret_cast<const uint8_t*>(x + k);
      const uint8_t* by = reinterpret_cast<const uint8_t*>(y + k);
      int j = 0;
      while (j < W && bx[j] == by[j]) ++j;
      atomicMin(first + i, static_cast<unsigned long long>(k * W + size_t(j)));
      break;  // this thread's later words cannot come first
    }
  }
}

template <template <int> class Launch, class... Args>
void dispatch(int w, Args... args) {
  switch (w) {
    case 16: Launch<16>::run(args...); break;
    case 8: Launch<8>::run(args...); break;
    case 4: Launch<4>::run(args...); break;
    case 2: Launch<2>::run(args...); break;
    default: Launch<1>::run(args...); break;
  }
}

unsigned grid_for(int64_t n) { return unsigned(std::min<int64_t>(std::max<int64_t>(n, 1), 65535)); }

template <int W>
struct LaunchGather {
  static void run(uint8_t* dst, const uint8_t* src, const int64_t* rows, int64_t n, size_t row_bytes) {
    gather_kernel<W><<<grid_for(n), 256>>>(dst, src, rows, n, row_bytes);
  }
};
template <int W>
struct LaunchDiffer {
  static void run(const uint8_t* a, const uint8_t* b, int64_t n, size_t row_bytes, unsigned long long* first) {
    differ_kernel<W><<<grid_for(n), 256>>>(a, b, n, row_bytes, first);
  }
};

// Device scratch kept between calls: thousands of small gathers and
// comparisons a second would otherwise each pay a cudaMalloc and a cudaFree
// (which waits for the device). Never freed: at exit the CUDA runtime may be
// gone before a static destructor runs.
void* scratch(size_t bytes) {
  static thread_local DeviceBytes* kept = nullptr;
  if (!kept || kept->size() < bytes) {
    delete kept;
    kept = nullptr;
    kept = new DeviceBytes(Device::cuda, std::max(bytes, size_t(1) << 20));
  }
  return kept->get();
}

bool contiguous(const std::vector<int64_t>& rows) {
  for (size_t i = 1; i < rows.size(); ++i)
    if (rows[i] != rows[0] + int64_t(i)) return false;
  return true;
}

}  // namespace

DeviceBytes::DeviceBytes(Device d, size_t bytes) : device_(d), bytes_(bytes) {
  const size_t alloc = std::max(kAlign, (bytes + kAlign - 1) / kAlign * kAlign);
  if (d == Device::cpu) {
    ptr_ = std::aligned_alloc(kAlign, alloc);
    if (!ptr_) throw std::runtime_error("out of host memory for " + std::to_string(bytes) + " bytes");
  } else {
    cuda_ok(cudaMalloc(&ptr_, alloc), ("cudaMalloc of " + std::to_string(bytes) + " bytes").c_str());
  }
}

DeviceBytes::~DeviceBytes() {
  if (!ptr_) return;
  if (device_ == Device::cpu) std::free(ptr_);
  else cudaFree(ptr_);
}

DeviceBytes::DeviceBytes(DeviceBytes&& o) noexcept : device_(o.device_), bytes_(o.bytes_), ptr_(o.ptr_) {
  o.ptr_ = nullptr;
  o.bytes_ = 0;
}

DeviceBytes& DeviceBytes::operator=(DeviceBytes&& o) noexcept {
  if (this != &o) {
    this->~DeviceBytes();
    device_ = o.device_;
    bytes_ = o.bytes_;
    ptr_ = o.ptr_;
    o.ptr_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

void DeviceBytes::upload(const void* host, size_t bytes, size_t offset) {
  if (bytes == 0) return;
  if (offset + bytes > bytes_) throw std::out_of_range("DeviceBytes::upload past the end");
  char* at = static_cast<char*>(ptr_) + offset;
  if (device_ == Device::cpu) std::memcpy(at, host, bytes);
  else cuda_ok(cudaMemcpy(at, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy (upload)");
}

void DeviceBytes::download(void* host, size_t bytes, size_t offset) const {
  if (bytes == 0) return;
  if (offset + bytes > bytes_) throw std::out_of_range("DeviceBytes::download past the end");
  const char* at = static_cast<const char*>(ptr_) + offset;
  if (device_ == Device::cpu) std::memcpy(host, at, bytes);
  else cuda_ok(cudaMemcpy(host, at, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy (download)");
}

void DeviceBytes::fill(uint8_t byte, size_t first_bytes) {
  const size_t n = std::min(first_bytes, bytes_);
  if (n == 0) return;
  if (device_ == Device::cpu) std::memset(ptr_, byte, n);
  else cuda_ok(cudaMemset(ptr_, byte, n), "cudaMemset");
}

void copy_on_device(Device d, void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  if (d == Device::cpu) std::memcpy(dst, src, bytes);
  else cuda_ok(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice), "cudaMemcpy (device to device)");
}

void read_bytes(Device d, void* host, const void* src, size_t bytes) {
  if (bytes == 0) return;
  if (d == Device::cpu) std::memcpy(host, src, bytes);
  else cuda_ok(cudaMemcpy(host, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy (read back)");
}

void gather_rows(Device d, void* dst, const void* src, const std::vector<int64_t>& rows, size_t row_bytes) {
  if (rows.empty() || row_bytes == 0) return;
  auto* out = static_cast<uint8_t*>(dst);
  const auto* in = static_cast<const uint8_t*>(src);
  if (contiguous(rows)) return copy_on_device(d, out, in + size_t(rows[0]) * row_bytes, rows.size() * row_bytes);
  if (d == Device::cpu) {
    for (size_t i = 0; i < rows.size(); ++i) std::memcpy(out + i * row_bytes, in + size_t(rows[i]) * row_bytes, row_bytes);
    return;
  }
  auto* list = static_cast<int64_t*>(scratch(rows.size() * sizeof(int64_t)));
  cuda_ok(cudaMemcpy(list, rows.data(), rows.size() * sizeof(int64_t), cudaMemcpyHostToDevice), "cudaMemcpy (rows)");
  dispatch<LaunchGather>(word_bytes(dst, src, row_bytes), out, in, list, int64_t(rows.size()), row_bytes);
  cuda_ok(cudaGetLastError(), "gather kernel launch");
  cuda_ok(cudaDeviceSynchronize(), "gather kernel");
}

std::vector<int64_t> first_differing_bytes(Device d, const void* a, const void* b, int64_t n, size_t row_bytes) {
  std::vector<int64_t> first(size_t(std::max<int64_t>(n, 0)), -1);
  if (n <= 0 || row_bytes == 0) return first;
  const auto* x = static_cast<const uint8_t*>(a);
  const auto* y = static_cast<const uint8_t*>(b);
  if (d == Device::cpu) {
    for (int64_t i = 0; i < n; ++i) {
      const uint8_t* rx = x + size_t(i) * row_bytes;
      const uint8_t* ry = y + size_t(i) * row_bytes;
      if (std::memcmp(rx, ry, row_bytes) == 0) continue;
      size_t j = 0;
      while (rx[j] == ry[j]) ++j;
      first[size_t(i)] = int64_t(j);
    }
    return first;
  }
  const size_t bytes = size_t(n) * sizeof(unsigned long long);
  auto* found = static_cast<unsigned long long*>(scratch(bytes));
  cuda_ok(cudaMemset(found, 0xff, bytes), "cudaMemset (compare)");
  dispatch<LaunchDiffer>(word_bytes(a, b, row_bytes), x, y, n, row_bytes, found);
  cuda_ok(cudaGetLastError(), "compare kernel launch");
  std::vector<unsigned long long> raw(static_cast<size_t>(n));
  cuda_ok(cudaMemcpy(raw.data(), found, bytes, cudaMemcpyDeviceToHost), "compare kernel");
  for (int64_t i = 0; i < n; ++i)
    if (raw[size_t(i)] != ~0ull) first[size_t(i)] = int64_t(raw[size_t(i)]);
  return first;
}

}  // namespace gatecheck
