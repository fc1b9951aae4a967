#include "call_arena.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include "../../kernels/cuda/gate_residual_cuda.h"
#include "guarded_buffer.h"  // kGuardBytes, kCanaryByte

namespace gatecheck {

namespace {

constexpr size_t kAlign = 256;  // every region starts here, as cudaMalloc's pointers do
static_assert(kGuardBytes % kAlign == 0, "regions stay aligned after their front guard");

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(e));
}

// What one thread keeps between calls. Grown on demand (by half again, so a
// run of growing cases does not reallocate every time), freed at thread exit.
struct ThreadArena {
  uint8_t* cpu = nullptr;     // the CPU arena
  size_t cpu_cap = 0;
  uint8_t* pinned = nullptr;  // the CUDA arena's host image
  size_t pinned_cap = 0;
  uint8_t* dev = nullptr;     // the CUDA arena
  size_t dev_cap = 0;
  cudaStream_t stream = nullptr;
  bool has_stream = false;

  ~ThreadArena() {
    std::free(cpu);
    if (has_stream) {
      (void)gate_residual_cuda_release_stream(stream);  // the kernels' per-stream state
      cudaStreamDestroy(stream);
    }
    if (dev) cudaFree(dev);
    if (pinned) cudaFreeHost(pinned);
  }

  static size_t grown(size_t need, size_t cap) { return round_up(std::max(need, cap + cap / 2), 1 << 16); }

  uint8_t* cpu_for(size_t bytes) {
    if (bytes > cpu_cap) {
      std::free(cpu);
      cpu = nullptr;
      cpu_cap = 0;
      const size_t cap = grown(bytes, cpu_cap);
      void* p = std::aligned_alloc(kAlign, cap);
      if (!p) throw std::bad_alloc();
      cpu = static_cast<uint8_t*>(p);
      cpu_cap = cap;
    }
    return cpu;
  }

  cudaStream_t stream_for_thread() {
    if (!has_stream) {
      cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
      has_stream = true;
    }
    return stream;
  }

  void cuda_for(size_t bytes) {
    const cudaStream_t s = stream_for_thread();
    if (bytes > pinned_cap || bytes > dev_cap) cuda_check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    if (bytes > pinned_cap) {
      if (pinned) cudaFreeHost(pinned);
      pinned = nullptr;
      const size_t cap = grown(bytes, pinned_cap);
      pinned_cap = 0;
      void* p = nullptr;
      cuda_check(cudaHostAlloc(&p, cap, cudaHostAllocDefault), "cudaHostAlloc");
      pinned = static_cast<uint8_t*>(p);
      pinned_cap = cap;
    }
    if (bytes > dev_cap) {
      if (dev) cudaFree(dev);
      dev = nullptr;
      const size_t cap = grown(bytes, dev_cap);
      dev_cap = 0;
      void* p = nullptr;
      cuda_check(cudaMalloc(&p, cap), "cudaMalloc");
      dev = static_cast<uint8_t*>(p);
      dev_cap = cap;
    }
  }
};

ThreadArena& arena() {
  thread_local ThreadArena a;
  return a;
}

// Repeats `pattern` over dst: the pattern once, then doubling copies of what
// is written (each starts at a multiple of the pattern's size).
void fill_pattern(uint8_t* dst, size_t bytes, const std::vector<uint8_t>& pattern) {
  if (bytes == 0 || pattern.empty()) return;
  size_t done = std::min(bytes, pattern.size());
  std::memcpy(dst, pattern.data(), done);
  while (done < bytes) {
    const size_t n = std::min(done, bytes - done);
    std::memcpy(dst + done, dst, n);
    done += n;
  }
}

}  // namespace

void* CallArena::stream() { return arena().stream_for_thread(); }

CallArena::CallArena(Device d, const std::vector<Region>& regions, const std::vector<uint8_t>& poison)
    : device_(d) {
  size_t at = 0;
  for (const Region& r : regions) {
    regions_.push_back({r.name, r.bytes, r.input, at + kGuardBytes});
    at = round_up(at + kGuardBytes + r.bytes + kGuardBytes, kAlign);
  }
  total_ = at;
  ThreadArena& a = arena();
  if (d == Device::cpu) {
    host_base_ = device_base_ = a.cpu_for(total_);
  } else {
    a.cuda_for(total_);
    host_base_ = a.pinned;
    device_base_ = a.dev;
  }
  // The image: canaries everywhere but in the regions, inputs, poison.
  size_t gap_from = 0;
  for (const Placed& r : regions_) {
    std::memset(host_base_ + gap_from, kCanaryByte, r.offset - gap_from);
    if (r.input) {
      if (r.bytes) std::memcpy(host_base_ + r.offset, r.input, r.bytes);
    } else {
      fill_pattern(host_base_ + r.offset, r.bytes, poison);
    }
    gap_from = r.offset + r.bytes;
  }
  std::memset(host_base_ + gap_from, kCanaryByte, total_ - gap_from);
  if (d == Device::cuda)
    cuda_check(cudaMemcpyAsync(device_base_, host_base_, total_, cudaMemcpyHostToDevice, a.stream_for_thread()),
               "cudaMemcpyAsync (arena up)");
}

CallArena::~CallArena() {
  // A call that threw before fetch(): the copy up may still be reading the
  // image, which the next call on this thread would overwrite.
  if (device_ == Device::cuda && !fetched_) cudaStreamSynchronize(arena().stream_for_thread());
}

void* CallArena::ptr(size_t i) const { return device_base_ + regions_[i].offset; }

void CallArena::fetch() {
  fetched_ = true;
  if (device_ == Device::cpu) return;
  const cudaStream_t s = arena().stream_for_thread();
  cuda_check(cudaMemcpyAsync(host_base_, device_base_, total_, cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync (arena down)");
  cuda_check(cudaStreamSynchronize(s), "cudaStreamSynchronize (arena down)");
}

const uint8_t* CallArena::host(size_t i) const { return host_base_ + regions_[i].offset; }

size_t CallArena::damaged_guard_bytes(size_t i, int64_t* first, int64_t* last) const {
  const Placed& r = regions_[i];
  const size_t end = i + 1 < regions_.size() ? regions_[i + 1].offset - kGuardBytes : total_;
  size_t n = 0;
  *first = *last = 0;
  auto scan = [&](size_t from, size_t to) {
    for (size_t k = from; k < to; ++k)
      if (host_base_[k] != kCanaryByte) {
        const int64_t off = int64_t(k) - int64_t(r.offset);
        if (n == 0) *first = off;
        *last = off;
        ++n;
      }
  };
  scan(r.offset - kGuardBytes, r.offset);
  scan(r.offset + r.bytes, end);
  return n;
}

int64_t CallArena::changed_input_bytes(size_t i, int64_t* first) const {
  const Placed& r = regions_[i];
  *first = -1;
  if (!r.input || r.bytes == 0 || std::memcmp(host(i), r.input, r.bytes) == 0) return 0;
  const auto* now = host(i);
  const auto* was = static_cast<const uint8_t*>(r.input);
  int64_t count = 0;
  for (size_t k = 0; k < r.bytes; ++k)
    if (now[k] != was[k]) {
      if (*first < 0) *first = int64_t(k);
      ++count;
    }
  return count;
}

}  // namespace gatecheck
