#include "bench_device.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <vector>

#include "../kernels/gate_residual_dtype.h"

namespace gatecheck {
namespace bench {

namespace {
__global__ void fill_kernel(void* p, int64_t n, int dtype, uint64_t seed) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    uint64_t x = (uint64_t(i) + seed * 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;
    x ^= x >> 31;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 29;
    const float v = float(x >> 40) * (4.0f / 16777216.0f) - 2.0f;
    if (dtype == 0) static_cast<float*>(p)[i] = v;
    else if (dtype == 1) static_cast<f16_t*>(p)[i] = round_to<f16_t>(v);
    else static_cast<bf16_t*>(p)[i] = round_to<bf16_t>(v);
  }
}
__global__ void empty_kernel() {}

// Spins until the host sets *release (mapped host memory) or timeout_ns pass.
__global__ void hold_kernel(const volatile int* release, int* timed_out, unsigned long long timeout_ns) {
  unsigned long long t0 = 0, t = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  while (*release == 0) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    if (t - t0 > timeout_ns) {
      *timed_out = 1;
      return;
    }
    __nanosleep(1000);
  }
}

// One pair of mapped host words per batch: the release flag and the timeout mark.
class StreamHold {
 public:
  StreamHold() {
    void* host = nullptr;
    void* dev = nullptr;
    cuda_ok(cudaHostAlloc(&host, 2 * sizeof(int), cudaHostAllocMapped), "cudaHostAlloc (hold)");
    cuda_ok(cudaHostGetDevicePointer(&dev, host, 0), "cudaHostGetDevicePointer (hold)");
    words_ = static_cast<volatile int*>(host);
    dev_words_ = static_cast<int*>(dev);
  }
  ~StreamHold() { cudaFreeHost(const_cast<int*>(words_)); }
  StreamHold(const StreamHold&) = delete;
  StreamHold& operator=(const StreamHold&) = delete;
  // The previous batch's hold has run by now (the host synchronised after it).
  void hold() {
    words_[0] = 0;
    words_[1] = 0;
    hold_kernel<<<1, 1>>>(dev_words_, dev_words_ + 1, 100ull * 1000 * 1000);
    cuda_ok(cudaGetLastError(), "hold kernel");
  }
  void release() {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    words_[0] = 1;
  }
  bool timed_out() const { return words_[1] != 0; }

 private:
  volatile int* words_ = nullptr;
  int* dev_words_ = nullptr;
};

int g_hold_timeouts = 0;
Queue g_queue = Queue::Held;
}  // namespace

int hold_timeouts() { return g_hold_timeouts; }
void set_timing_queue(Queue queue) { g_queue = queue == Queue::Chosen ? Queue::Held : queue; }

double empty_kernel_us(int blocks, const Warmup& warmup, int reps, Queue queue) {
  return median_us([&](int) { empty_kernel<<<blocks, 256>>>(); }, warmup, reps, queue);
}

void fill_random(void* p, int64_t n, int dtype, uint64_t seed) {
  if (n == 0) return;
  fill_kernel<<<4096, 256>>>(p, n, dtype, seed);
  cuda_ok(cudaGetLastError(), "fill kernel");
}

double median_us(const std::function<void(int)>& run, const Warmup& warmup, int reps, Queue queue) {
  if (queue == Queue::Chosen) queue = g_queue;
  const auto start = std::chrono::steady_clock::now();
  int done = 0;
  while (true) {
    for (int i = 0; i < std::max(1, warmup.runs); ++i) run(done++);
    cuda_ok(cudaDeviceSynchronize(), "synchronise after warm-up");
    const std::chrono::duration<double, std::milli> spent = std::chrono::steady_clock::now() - start;
    if (done >= warmup.runs && spent.count() >= warmup.min_ms) break;
  }
  std::vector<cudaEvent_t> ev(size_t(2 * reps));
  for (auto& e : ev) cuda_ok(cudaEventCreate(&e), "cudaEventCreate");
  // Batches of 10 runs: a held batch must fit in the launch queue (eager's
  // forward+backward is about a dozen launches a run).
  constexpr int kBatch = 10;
  std::optional<StreamHold> hold;  // pinned host words: only a held run needs them
  if (queue == Queue::Held) hold.emplace();
  for (int b = 0; b < reps; b += kBatch) {
    if (hold) hold->hold();
    for (int i = b; i < std::min(reps, b + kBatch); ++i) {
      cuda_ok(cudaEventRecord(ev[size_t(2 * i)], 0), "cudaEventRecord");
      run(done + i);
      cuda_ok(cudaEventRecord(ev[size_t(2 * i + 1)], 0), "cudaEventRecord");
    }
    if (hold) {
      hold->release();
      cuda_ok(cudaDeviceSynchronize(), "synchronise after a held batch");
      if (hold->timed_out()) ++g_hold_timeouts;
    }
  }
  cuda_ok(cudaDeviceSynchronize(), "synchronise after timing");
  std::vector<double> t(static_cast<size_t>(reps));
  for (int i = 0; i < reps; ++i) {
    float ms = 0;
    cuda_ok(cudaEventElapsedTime(&ms, ev[size_t(2 * i)], ev[size_t(2 * i + 1)]), "cudaEventElapsedTime");
    t[size_t(i)] = double(ms) * 1000.0;
  }
  for (auto& e : ev) cudaEventDestroy(e);
  std::nth_element(t.begin(), t.begin() + reps / 2, t.end());
  return t[size_t(reps / 2)];
}

double copy_bandwidth(size_t bytes, int reps) {
  void *a = nullptr, *b = nullptr;
  cuda_ok(cudaMalloc(&a, bytes), "cudaMalloc (copy)");
  cuda_ok(cudaMalloc(&b, bytes), "cudaMalloc (copy)");
  fill_random(a, int64_t(bytes / 4), 0, 1);
  const double us = median_us([&](int) { cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0); }, Warmup{3, 20.0}, reps);
  cudaFree(a);
  cudaFree(b);
  return 2.0 * double(bytes) / (us * 1e-6);
}

double copy_time_us(size_t bytes, const Warmup& warmup, int reps) {
  if (bytes == 0) return 0;
  int dev = 0;
  cudaDeviceProp prop{};
  cuda_ok(cudaGetDevice(&dev), "cudaGetDevice");
  cuda_ok(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
  const size_t stride = (std::max(bytes, size_t(prop.l2CacheSize)) + 255) & ~size_t(255);
  const int slots = int(std::max<size_t>(2, (4 * size_t(prop.l2CacheSize)) / stride + 1));
  void *a = nullptr, *b = nullptr;
  cuda_ok(cudaMalloc(&a, stride * size_t(slots)), "cudaMalloc (copy pool)");
  cuda_ok(cudaMalloc(&b, stride * size_t(slots)), "cudaMalloc (copy pool)");
  fill_random(a, int64_t(stride * size_t(slots) / 4), 0, 2);
  const double us = median_us(
      [&](int i) {
        const size_t o = stride * size_t(i % slots);
        cudaMemcpyAsync(static_cast<char*>(b) + o, static_cast<char*>(a) + o, bytes, cudaMemcpyDeviceToDevice, 0);
      },
      warmup, reps);
  cudaFree(a);
  cudaFree(b);
  return us;
}

}  // namespace bench
}  // namespace gatecheck
