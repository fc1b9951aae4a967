// The CUDA side of scheduling stress (scale_stress.h): a noise kernel that
// holds whole SMs, a delay kernel on the implementation's stream, and streams
// of both priorities. Streams are made once and kept for the process: the
// project's kernels cache scratch per stream, so a stream is never destroyed
// under them.
#include <cuda_runtime.h>

#include <mutex>
#include <thread>

#include "scale_stress.h"

namespace gatecheck {

namespace {

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Each block takes half an SM's shared memory and 1024 threads: two blocks
// fill an SM, so no other kernel's block is placed there until they end.
__global__ void noise_kernel(unsigned long long ns) {
  extern __shared__ unsigned char hold[];
  const unsigned long long end = global_ns() + ns;
  if (threadIdx.x == 0) hold[0] = 1;
  while (global_ns() < end) __nanosleep(500);
}

__global__ void delay_kernel(unsigned long long ns) {
  const unsigned long long end = global_ns() + ns;
  while (global_ns() < end) __nanosleep(200);
}

struct Streams {
  bool ok = false;
  cudaStream_t call[3] = {nullptr, nullptr, nullptr};   // [0] legacy default, [1] lowest, [2] highest priority
  cudaStream_t noise[3] = {nullptr, nullptr, nullptr};  // the other priority, non-blocking
  size_t half_smem = 0;
};

Streams& streams() {
  static Streams s;
  static std::once_flag once;
  std::call_once(once, [] {
    int dev = 0, least = 0, greatest = 0;
    cudaDeviceProp p{};
    if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&p, dev) != cudaSuccess ||
        cudaDeviceGetStreamPriorityRange(&least, &greatest) != cudaSuccess)
      return;
    s.half_smem = (p.sharedMemPerMultiprocessor - 2 * p.reservedSharedMemPerBlock) / 2;
    if (cudaFuncSetAttribute(noise_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(s.half_smem)) != cudaSuccess)
      return;
    const int prio[3] = {0, least, greatest};
    for (int i = 1; i < 3; ++i)
      if (cudaStreamCreateWithPriority(&s.call[i], cudaStreamDefault, prio[i]) != cudaSuccess) return;
    // noise: the priority the call does not have (the default stream's is 0, the lowest)
    const int other[3] = {greatest, greatest, least};
    for (int i = 0; i < 3; ++i)
      if (cudaStreamCreateWithPriority(&s.noise[i], cudaStreamNonBlocking, other[i]) != cudaSuccess) return;
    s.ok = true;
  });
  return s;
}

}  // namespace

int stress_capacity(Device d) {
  if (d == Device::cpu) {
    const unsigned n = std::thread::hardware_concurrency();
    return n ? int(n) : 1;
  }
  int dev = 0, sms = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
    return 0;
  return sms;
}

void* stress_device_begin(const StressSetting& st) {
  Streams& s = streams();
  if (!s.ok) return nullptr;
  const int pr = st.priority >= 0 && st.priority <= 2 ? st.priority : 0;
  if (st.noise_units > 0)
    noise_kernel<<<2 * st.noise_units, 1024, s.half_smem, s.noise[pr]>>>(1000ull * st.noise_us);
  if (st.delay_us > 0) delay_kernel<<<1, 32, 0, s.call[pr]>>>(1000ull * st.delay_us);
  // A launch that failed must not be read back as the implementation's error
  // by the next cudaGetLastError (a failed launch is not sticky): clear it.
  // Without the noise the run is merely less perturbed.
  (void)cudaGetLastError();
  return s.call[pr];
}

}  // namespace gatecheck
