// The device backend of a scale session (scale_backend.h): every buffer in
// device memory, inputs generated and outputs checked by kernels, and only
// counts, a few positions and requested rows copied back. The per-element
// functions are the host backend's (case/scale_values.h,
// oracles/exact_expected.h, scale_fingerprint.h). Kernels run on the legacy
// default stream, which orders them with the implementation's calls.
#include <cuda_runtime.h>

#include <string>

#include "../../oracles/exact_expected.h"
#include "scale_backend.h"
#include "scale_fingerprint.h"

namespace gatecheck {

namespace {

constexpr int kThreads = 256;

// Blocks for n elements, grid-stride beyond that.
unsigned blocks_for(uint64_t n) {
  const uint64_t b = (n + kThreads - 1) / kThreads;
  return unsigned(b < 1 ? 1 : b > 65536 ? 65536 : b);
}

struct DevDiff {
  unsigned long long count, first, some_n;
  long long some[kSomeDiffs];
};

__device__ void note(DevDiff* d, uint64_t i) {
  atomicAdd(&d->count, 1ull);
  atomicMin(&d->first, (unsigned long long)i);
  const unsigned long long slot = atomicAdd(&d->some_n, 1ull);
  if (slot < kSomeDiffs) d->some[slot] = (long long)i;
}

__device__ __forceinline__ uint32_t load(const void* p, uint64_t i, bool wide) {
  return wide ? static_cast<const uint32_t*>(p)[i] : static_cast<const uint16_t*>(p)[i];
}
__device__ __forceinline__ void store(void* p, uint64_t i, bool wide, uint32_t b) {
  if (wide) static_cast<uint32_t*>(p)[i] = b;
  else static_cast<uint16_t*>(p)[i] = uint16_t(b);
}

__device__ __forceinline__ uint64_t position(const ScaleGeom& g, uint64_t row, uint64_t c) {
  return uint64_t(g.row_map[row]) * uint64_t(g.orig_dim) + uint64_t(g.col_map[c]);
}

#define GRID_STRIDE(i, n) \
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); i += uint64_t(gridDim.x) * blockDim.x)

__global__ void gen_kernel(void* dst, DType t, ValueRule r, uint32_t which, ScaleGeom g) {
  const uint64_t n = uint64_t(g.rows) * uint64_t(g.dim);
  GRID_STRIDE(i, n) {
    const uint64_t row = i / uint64_t(g.dim);
    store(dst, i, t == DType::f32, scale_bits(t, r, which, position(g, row, i - row * g.dim)));
  }
}

__global__ void verify_kernel(const void* src, DType t, ValueRule r, uint32_t which, ScaleGeom g, DevDiff* d) {
  const uint64_t n = uint64_t(g.rows) * uint64_t(g.dim);
  GRID_STRIDE(i, n) {
    const uint64_t row = i / uint64_t(g.dim);
    if (load(src, i, t == DType::f32) != scale_bits(t, r, which, position(g, row, i - row * g.dim))) note(d, i);
  }
}

__global__ void fill_kernel(void* dst, uint64_t n, bool wide, uint32_t bits) {
  GRID_STRIDE(i, n) store(dst, i, wide, bits);
}

// One warp a row; the sum of terms wraps, so any order gives the host's result.
__global__ void prints_kernel(const void* src, int64_t rows, int64_t dim, bool wide, unsigned long long* out) {
  const uint64_t warp = (uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
  const uint64_t warps = uint64_t(gridDim.x) * blockDim.x / 32;
  for (uint64_t r = warp; r < uint64_t(rows); r += warps) {
    unsigned long long h = 0;
    for (uint64_t c = lane; c < uint64_t(dim); c += 32) h += scale_print_term(load(src, r * dim + c, wide), int64_t(c));
    for (int o = 16; o > 0; o /= 2) h += __shfl_xor_sync(0xffffffffu, h, o);
    if (lane == 0) out[r] = h;
  }
}

__global__ void compare_kernel(const void* a, const void* b, uint64_t n, bool wide, DevDiff* d) {
  GRID_STRIDE(i, n) if (load(a, i, wide) != load(b, i, wide)) note(d, i);
}

__global__ void poisoned_kernel(const void* a, uint32_t pa, const void* b, uint32_t pb, uint64_t n, bool wide,
                                DevDiff* d) {
  GRID_STRIDE(i, n) if (load(a, i, wide) == pa && load(b, i, wide) == pb) note(d, i);
}

__global__ void exact_rows_kernel(const void* got, int output, DType t, ValueRule r, ScaleGeom g, DevDiff* d) {
  const uint64_t n = uint64_t(g.rows) * uint64_t(g.dim);
  GRID_STRIDE(i, n) {
    const uint64_t row = i / uint64_t(g.dim), c = i - row * g.dim;
    const uint64_t pos = position(g, row, c);
    const uint64_t gpos = uint64_t(g.gate_of_row[row]) * uint64_t(g.orig_dim) + uint64_t(g.col_map[c]);
    const uint32_t want = output == 0   ? exact_out_bits(t, r, pos, gpos)
                          : output == 1 ? exact_grad_res_bits(t, r, pos)
                                        : exact_grad_y_bits(t, r, pos, gpos);
    if (load(got, i, t == DType::f32) != want) note(d, i);
  }
}

// One thread a (gate, column): the gate's rows in any order (integer sums).
__global__ void exact_gates_kernel(const void* got, int64_t gates, DType t, ValueRule r, ScaleGeom g,
                                   const int64_t* offsets, const int64_t* members, DevDiff* d) {
  const uint64_t n = uint64_t(gates) * uint64_t(g.dim);
  GRID_STRIDE(i, n) {
    const uint64_t k = i / uint64_t(g.dim), c = i - k * g.dim;
    int64_t sum = 0;
    bool nonzero = false;
    for (int64_t m = offsets[k]; m < offsets[k + 1]; ++m) {
      const int64_t u = exact_term_units(r, position(g, uint64_t(members[m]), c));
      sum += u;
      nonzero |= u != 0;
    }
    const ExactGateExpect e = exact_grad_gate_bits(t, r.frac_bits, sum, offsets[k + 1] > offsets[k], nonzero);
    const uint32_t b = load(got, i, t == DType::f32);
    if (b != e.bits && b != e.alt_bits) note(d, i);
  }
}

__global__ void not_byte_kernel(const uint8_t* p, uint64_t n, uint8_t byte, unsigned long long* acc) {
  GRID_STRIDE(i, n) if (p[i] != byte) {
    atomicAdd(&acc[0], 1ull);
    atomicMin(&acc[1], (unsigned long long)i);
    atomicMax(&acc[2], (unsigned long long)i);
  }
}

std::string cuda_text(cudaError_t e) { return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e); }

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("scale session: ") + what + ": " + cuda_text(e));
}

class DeviceBackend final : public ScaleBackend {
 public:
  DeviceBackend() {
    check(cudaMalloc(&diff_, sizeof(DevDiff)), "cudaMalloc");
    check(cudaMalloc(&acc_, 3 * sizeof(unsigned long long)), "cudaMalloc");
  }
  ~DeviceBackend() override {
    cudaFree(diff_);
    cudaFree(acc_);
  }
  Device device() const override { return Device::cuda; }
  void* alloc(size_t bytes) override {
    void* p = nullptr;
    const cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();  // an allocation failure is not sticky
      throw ScaleNoMemory("cudaMalloc of " + std::to_string(bytes >> 20) + " MiB failed: " + cuda_text(e));
    }
    return p;
  }
  void release(void* p) override { cudaFree(p); }
  void upload(void* dst, const void* src, size_t bytes) override {
    if (bytes) check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "upload");
  }
  void download(void* dst, const void* src, size_t bytes) override {
    if (bytes) check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "download");
  }
  void fill_bytes(void* dst, uint8_t byte, size_t bytes) override {
    if (bytes) check(cudaMemset(dst, byte, bytes), "cudaMemset");
  }
  int64_t count_not_byte(const void* p, size_t bytes, uint8_t byte, int64_t* first, int64_t* last) override {
    if (!bytes) return 0;
    const unsigned long long init[3] = {0, ~0ull, 0};
    upload(acc_, init, sizeof init);
    not_byte_kernel<<<blocks_for(bytes), kThreads>>>(static_cast<const uint8_t*>(p), bytes, byte, acc_);
    unsigned long long got[3];
    download(got, acc_, sizeof got);
    if (got[0]) {
      *first = int64_t(got[1]);
      *last = int64_t(got[2]);
    }
    return int64_t(got[0]);
  }
  void generate(void* dst, DType t, const ValueRule& r, ScaleTensor which, const ScaleGeom& g) override {
    const uint64_t n = uint64_t(g.rows) * uint64_t(g.dim);
    if (n) gen_kernel<<<blocks_for(n), kThreads>>>(dst, t, r, which, g);
    launched("generate");
  }
  DiffCount verify(const void* src, DType t, const ValueRule& r, ScaleTensor which, const ScaleGeom& g) override {
    const uint64_t n = uint64_t(g.rows) * uint64_t(g.dim);
    return counted(n, [&] { verify_kernel<<<blocks_for(n), kThreads>>>(src, t, r, which, g, diff_); });
  }
  void fill_elements(void* dst, int64_t n, DType t, uint32_t bits) override {
    if (n > 0) fill_kernel<<<blocks_for(uint64_t(n)), kThreads>>>(dst, uint64_t(n), t == DType::f32, bits);
    launched("fill");
  }
  void row_prints(const void* src, int64_t rows, int64_t dim, DType t, uint64_t* out_host) override {
    if (rows <= 0) return;
    unsigned long long* out = static_cast<unsigned long long*>(alloc(size_t(rows) * 8));
    prints_kernel<<<blocks_for(uint64_t(rows) * 32), kThreads>>>(src, rows, dim, t == DType::f32, out);
    const cudaError_t e = cudaMemcpy(out_host, out, size_t(rows) * 8, cudaMemcpyDeviceToHost);
    cudaFree(out);
    check(e, "fingerprints");
  }
  DiffCount compare(const void* a, const void* b, int64_t n, DType t) override {
    return counted(uint64_t(n), [&] { compare_kernel<<<blocks_for(uint64_t(n)), kThreads>>>(a, b, uint64_t(n), t == DType::f32, diff_); });
  }
  DiffCount both_poisoned(const void* a, uint32_t pa, const void* b, uint32_t pb, int64_t n, DType t) override {
    return counted(uint64_t(n), [&] {
      poisoned_kernel<<<blocks_for(uint64_t(n)), kThreads>>>(a, pa, b, pb, uint64_t(n), t == DType::f32, diff_);
    });
  }
  DiffCount exact_rows(const void* got, int output, DType t, const ValueRule& r, const ScaleGeom& g) override {
    const uint64_t n = uint64_t(g.rows) * uint64_t(g.dim);
    return counted(n, [&] { exact_rows_kernel<<<blocks_for(n), kThreads>>>(got, output, t, r, g, diff_); });
  }
  DiffCount exact_gates(const void* got, int64_t gates, DType t, const ValueRule& r, const ScaleGeom& g,
                        const int64_t* offsets, const int64_t* members) override {
    const uint64_t n = uint64_t(gates) * uint64_t(g.dim);
    return counted(n, [&] {
      exact_gates_kernel<<<blocks_for(n), kThreads>>>(got, gates, t, r, g, offsets, members, diff_);
    });
  }
  Status sync() override {
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e != cudaSuccess)
      return Status::error(ErrorKind::implementation, "CUDA error after the call: " + cuda_text(e));
    return Status::success();
  }
  bool usable() override {
    (void)cudaGetLastError();                      // clears an error that is not sticky
    return cudaDeviceSynchronize() == cudaSuccess;  // a sticky one comes back every time
  }

 private:
  void launched(const char* what) { check(cudaGetLastError(), what); }
  template <class Launch>
  DiffCount counted(uint64_t n, Launch launch) {
    DiffCount d;
    if (n == 0) return d;
    DevDiff init{};
    init.first = ~0ull;
    upload(diff_, &init, sizeof init);
    launch();
    launched("check");
    DevDiff got{};
    download(&got, diff_, sizeof got);
    d.count = int64_t(got.count);
    if (got.count) d.first = int64_t(got.first);
    for (unsigned long long i = 0; i < got.some_n && i < kSomeDiffs; ++i) d.some.push_back(got.some[i]);
    return d;
  }
  DevDiff* diff_ = nullptr;
  unsigned long long* acc_ = nullptr;
};

}  // namespace

std::unique_ptr<ScaleBackend> make_device_scale_backend() { return std::make_unique<DeviceBackend>(); }

uint64_t scale_device_free_bytes() {
  size_t free_b = 0, total_b = 0;
  if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return free_b;
}

}  // namespace gatecheck
