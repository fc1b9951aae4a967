// CUDA plugins for the scale tier, one per build (SCALE_BUG is set by
// tests/scale/CMakeLists.txt): a plain, correct CUDA implementation of
// gate_residual, and variants with one realistic GPU bug each that only
// shows at scale. gatecheck's default `check --device cuda` must catch each
// bug and shrink it (bench/device/stages/scale.sh), and must not flag the
// correct ones.
//
//  CORRECT:      elementwise kernels with one block a row on a grid of at most
//                65,535 blocks that loops over the rest; grad_gate one thread
//                a (gate, column), summing the gate's rows in row order.
//  FUSED:        CORRECT with the forward rounded once (an FMA), as
//                properties/mutants' fused-forward: correct, not eager-exact.
//  GRID_LIMIT:   the row kernels have no loop: rows 65,535 and on are never
//                written (a grid capped at the 65,535-block limit).
//  ATOMIC_ORDER: grad_gate sums each gate's rows in tiles of 256 rows, one
//                block a tile, and adds the tile partials into fp32 sums with
//                float atomicAdd, in the order the blocks get there.
//  OFFSETS32:    the row kernels address elements by a 32-bit byte offset,
//                which wraps past 2^32 bytes (2^31 elements of a 16-bit
//                dtype, 2^30 of fp32).
#include <cuda_runtime.h>

#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/gate_residual.h"
#include "kernels/gate_residual_math.h"

#define CORRECT 0
#define FUSED 1
#define GRID_LIMIT 2
#define ATOMIC_ORDER 3
#define OFFSETS32 4

namespace {

using namespace gatecheck;

constexpr int64_t kMaxBlocks = 65535;
constexpr int kTileRows = 256;
constexpr uint32_t kCuda = 1u << GATECHECK_CUDA;

thread_local std::string g_error;

// Element i of a row tensor: the whole offset in 64 bits, or (OFFSETS32) the
// byte offset in 32.
template <class T>
__device__ __forceinline__ T* at(T* base, uint64_t i) {
  if (SCALE_BUG == OFFSETS32) {
    using Byte = typename std::conditional<std::is_const<T>::value, const char, char>::type;
    return reinterpret_cast<T*>(reinterpret_cast<Byte*>(base) + uint32_t(i * sizeof(T)));
  }
  return base + i;
}

__device__ __forceinline__ float round_to_odd(double d) {
  const float f = __double2float_rz(d);
  if (isnan(d) || isinf(d) || double(f) == d) return f;
  return __uint_as_float(__float_as_uint(f) | 1u);
}

template <class T>
__device__ __forceinline__ T forward_element(T res, T gate, T y) {
  if (SCALE_BUG != FUSED) return gate_residual_out<T>(res, gate, y);
  if constexpr (std::is_same<T, float>::value) return round_to<float>(__fmaf_rn(gate, y, res));
  else return round_to<T>(round_to_odd(__fma_rn(double(to_float(gate)), double(to_float(y)), double(to_float(res)))));
}

// One block a row; the grid holds at most 65,535 blocks and loops over the rest
// (GRID_LIMIT: does not).
template <class T>
__global__ void forward_kernel(const T* res, const T* gate, const int64_t* index, const T* y, T* out, int64_t rows,
                               int64_t dim) {
  for (int64_t r = blockIdx.x; r < rows; r += (SCALE_BUG == GRID_LIMIT ? rows : gridDim.x))
    for (int64_t c = threadIdx.x; c < dim; c += blockDim.x) {
      const uint64_t i = uint64_t(r) * uint64_t(dim) + uint64_t(c);
      *at(out, i) = forward_element<T>(*at(res, i), gate[index[r] * dim + c], *at(y, i));
    }
}

template <class T>
__global__ void backward_rows_kernel(const T* g, const T* gate, const int64_t* index, T* grad_res, T* grad_y,
                                     int64_t rows, int64_t dim) {
  for (int64_t r = blockIdx.x; r < rows; r += (SCALE_BUG == GRID_LIMIT ? rows : gridDim.x))
    for (int64_t c = threadIdx.x; c < dim; c += blockDim.x) {
      const uint64_t i = uint64_t(r) * uint64_t(dim) + uint64_t(c);
      const T gv = *at(g, i);
      *at(grad_res, i) = gv;
      *at(grad_y, i) = gate_residual_grad_y<T>(gv, gate[index[r] * dim + c]);
    }
}

// One thread a (gate, column): the gate's rows (members[offsets[k]..]) in row order.
template <class T>
__global__ void grad_gate_kernel(const T* g, const T* y, const int64_t* offsets, const int64_t* members, T* grad_gate,
                                 int64_t gates, int64_t dim) {
  const uint64_t n = uint64_t(gates) * uint64_t(dim);
  for (uint64_t t = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < n; t += uint64_t(gridDim.x) * blockDim.x) {
    const int64_t k = int64_t(t / uint64_t(dim)), c = int64_t(t % uint64_t(dim));
    float acc = 0.0f;
    for (int64_t m = offsets[k]; m < offsets[k + 1]; ++m) {
      const int64_t i = members[m] * dim + c;
      acc = gate_residual_accumulate(acc, gate_residual_grad_gate_term<T>(g[i], y[i]));
    }
    grad_gate[t] = gate_residual_grad_gate_finish<T>(acc);
  }
}

// ATOMIC_ORDER: one block a tile of 256 rows of one gate (tile_gate, tile_first,
// tile_rows) and a chunk of columns; the partial goes in with atomicAdd.
template <class T>
__global__ void tile_atomic_kernel(const T* g, const T* y, const int64_t* members, const int64_t* tile_gate,
                                   const int64_t* tile_first, const int32_t* tile_rows, float* acc, int64_t dim) {
  const int64_t tile = blockIdx.x;
  for (int64_t c = int64_t(blockIdx.y) * blockDim.x + threadIdx.x; c < dim; c += int64_t(gridDim.y) * blockDim.x) {
    float part = 0.0f;
    for (int j = 0; j < tile_rows[tile]; ++j) {
      const int64_t i = members[tile_first[tile] + j] * dim + c;
      part = gate_residual_accumulate(part, gate_residual_grad_gate_term<T>(g[i], y[i]));
    }
    atomicAdd(&acc[tile_gate[tile] * dim + c], part);
  }
}

template <class T>
__global__ void finish_kernel(const float* acc, T* grad_gate, uint64_t n) {
  for (uint64_t t = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < n; t += uint64_t(gridDim.x) * blockDim.x)
    grad_gate[t] = gate_residual_grad_gate_finish<T>(acc[t]);
}

int fail(const std::string& msg) {
  g_error = msg;
  return 1;
}

int from_status(const Status& s) { return s.ok() ? 0 : fail(s.message); }

int cuda_fail(const char* op, cudaError_t e) {
  return fail(std::string(op) + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

// The index on the host, range-checked (the message names index[r] and its value).
int host_index(const char* op, const gatecheck_problem& p, const int64_t* index, std::vector<int64_t>* h) {
  h->resize(size_t(p.rows));
  if (p.rows == 0) return 0;
  auto s = static_cast<cudaStream_t>(p.stream);
  cudaError_t e = cudaMemcpyAsync(h->data(), index, size_t(p.rows) * 8, cudaMemcpyDeviceToHost, s);
  if (e == cudaSuccess) e = cudaStreamSynchronize(s);
  if (e != cudaSuccess) return cuda_fail(op, e);
  return from_status(check_index_range(op, p, h->data()));
}

unsigned blocks_for(int64_t rows) { return unsigned(std::max<int64_t>(1, std::min(rows, kMaxBlocks))); }

template <class T>
int forward_t(const gatecheck_problem& p, const void* res, const void* gate, const int64_t* index, const void* y,
              void* out) {
  if (p.rows == 0 || p.dim == 0) return 0;
  auto s = static_cast<cudaStream_t>(p.stream);
  forward_kernel<T><<<blocks_for(p.rows), 256, 0, s>>>(static_cast<const T*>(res), static_cast<const T*>(gate), index,
                                                       static_cast<const T*>(y), static_cast<T*>(out), p.rows, p.dim);
  const cudaError_t e = cudaStreamSynchronize(s);
  return e == cudaSuccess ? 0 : cuda_fail("gate_residual_fwd", e);
}

template <class T>
int backward_t(const gatecheck_problem& p, const void* grad_out, const void* gate, const int64_t* index,
               const std::vector<int64_t>& h_index, const void* y, void* grad_res, void* grad_gate, void* grad_y) {
  auto s = static_cast<cudaStream_t>(p.stream);
  const T* g = static_cast<const T*>(grad_out);
  if (p.rows > 0 && p.dim > 0)
    backward_rows_kernel<T><<<blocks_for(p.rows), 256, 0, s>>>(g, static_cast<const T*>(gate), index,
                                                               static_cast<T*>(grad_res), static_cast<T*>(grad_y),
                                                               p.rows, p.dim);
  const int64_t ng = p.gates * p.dim;
  if (ng == 0) {
    const cudaError_t e = cudaStreamSynchronize(s);
    return e == cudaSuccess ? 0 : cuda_fail("gate_residual_bwd", e);
  }
  // each gate's rows in row order (a CSR built on the host)
  std::vector<int64_t> offsets(size_t(p.gates) + 1, 0), members(h_index.size());
  for (int64_t k : h_index) ++offsets[size_t(k) + 1];
  for (size_t k = 1; k < offsets.size(); ++k) offsets[k] += offsets[k - 1];
  std::vector<int64_t> next(offsets.begin(), offsets.end() - 1);
  for (size_t r = 0; r < h_index.size(); ++r) members[size_t(next[size_t(h_index[r])]++)] = int64_t(r);
  std::vector<int64_t> tile_gate, tile_first;
  std::vector<int32_t> tile_rows;
  if (SCALE_BUG == ATOMIC_ORDER)
    for (int64_t k = 0; k < p.gates; ++k)
      for (int64_t f = offsets[size_t(k)]; f < offsets[size_t(k) + 1]; f += kTileRows) {
        tile_gate.push_back(k);
        tile_first.push_back(f);
        tile_rows.push_back(int32_t(std::min<int64_t>(kTileRows, offsets[size_t(k) + 1] - f)));
      }
  std::vector<void*> owned;
  auto put = [&](const void* src, size_t bytes) -> void* {
    void* d = nullptr;
    if (cudaMalloc(&d, std::max<size_t>(bytes, 8)) != cudaSuccess) return nullptr;
    owned.push_back(d);
    if (bytes && cudaMemcpyAsync(d, src, bytes, cudaMemcpyHostToDevice, s) != cudaSuccess) return nullptr;
    return d;
  };
  auto* d_off = static_cast<const int64_t*>(put(offsets.data(), offsets.size() * 8));
  auto* d_mem = static_cast<const int64_t*>(put(members.data(), members.size() * 8));
  int rc = 0;
  if (!d_off || !d_mem) rc = fail("gate_residual_bwd: out of memory for the gate plan");
  if (rc == 0 && SCALE_BUG == ATOMIC_ORDER) {
    auto* d_tg = static_cast<const int64_t*>(put(tile_gate.data(), tile_gate.size() * 8));
    auto* d_tf = static_cast<const int64_t*>(put(tile_first.data(), tile_first.size() * 8));
    auto* d_tr = static_cast<const int32_t*>(put(tile_rows.data(), tile_rows.size() * 4));
    float* acc = nullptr;
    if (cudaMalloc(&acc, size_t(ng) * 4) == cudaSuccess) owned.push_back(acc);
    else acc = nullptr;
    if (!d_tg || !d_tf || !d_tr || !acc) {
      rc = fail("gate_residual_bwd: out of memory for the tile sums");
    } else {
      cudaMemsetAsync(acc, 0, size_t(ng) * 4, s);  // +0: unused gates stay +0
      if (!tile_gate.empty()) {
        const dim3 grid(unsigned(tile_gate.size()), unsigned(std::min<int64_t>((p.dim + 255) / 256, 65535)));
        tile_atomic_kernel<T><<<grid, 256, 0, s>>>(g, static_cast<const T*>(y), d_mem, d_tg, d_tf, d_tr, acc, p.dim);
      }
      finish_kernel<T><<<unsigned(std::min<int64_t>((ng + 255) / 256, 65536)), 256, 0, s>>>(acc, static_cast<T*>(grad_gate),
                                                                                           uint64_t(ng));
    }
  } else if (rc == 0) {
    grad_gate_kernel<T><<<unsigned(std::min<int64_t>((ng + 255) / 256, 65536)), 256, 0, s>>>(
        g, static_cast<const T*>(y), d_off, d_mem, static_cast<T*>(grad_gate), p.gates, p.dim);
  }
  const cudaError_t e = cudaStreamSynchronize(s);
  for (void* d : owned) cudaFree(d);
  if (rc) return rc;
  return e == cudaSuccess ? 0 : cuda_fail("gate_residual_bwd", e);
}

int forward(const gatecheck_problem* p, const void* res, const void* gate, const int64_t* index, const void* y,
            void* out) {
  if (!p) return fail("gate_residual_fwd: problem is null");
  if (int rc = from_status(check_fwd_args(*p, res, gate, index, y, out, kCuda, /*index_on_host=*/false))) return rc;
  std::vector<int64_t> h;
  if (int rc = host_index("gate_residual_fwd", *p, index, &h)) return rc;
  switch (DType(p->dtype)) {
    case DType::f32: return forward_t<float>(*p, res, gate, index, y, out);
    case DType::f16: return forward_t<f16_t>(*p, res, gate, index, y, out);
    default: return forward_t<bf16_t>(*p, res, gate, index, y, out);
  }
}

int backward(const gatecheck_problem* p, const void* grad_out, const void* gate, const int64_t* index, const void* y,
             void* grad_res, void* grad_gate, void* grad_y) {
  if (!p) return fail("gate_residual_bwd: problem is null");
  if (int rc = from_status(check_bwd_args(*p, grad_out, gate, index, y, grad_res, grad_gate, grad_y, kCuda,
                                          /*index_on_host=*/false)))
    return rc;
  std::vector<int64_t> h;
  if (int rc = host_index("gate_residual_bwd", *p, index, &h)) return rc;
  switch (DType(p->dtype)) {
    case DType::f32: return backward_t<float>(*p, grad_out, gate, index, h, y, grad_res, grad_gate, grad_y);
    case DType::f16: return backward_t<f16_t>(*p, grad_out, gate, index, h, y, grad_res, grad_gate, grad_y);
    default: return backward_t<bf16_t>(*p, grad_out, gate, index, h, y, grad_res, grad_gate, grad_y);
  }
}

const char* last_error() { return g_error.c_str(); }

}  // namespace

extern "C" __attribute__((visibility("default"))) const gatecheck_plugin* gatecheck_plugin_v1(void) {
  static const char* names[] = {"scale:correct", "scale:fused", "scale-bug:grid-limit", "scale-bug:atomic-order",
                                "scale-bug:offsets32"};
  static const gatecheck_plugin plugin = {GATECHECK_ABI_VERSION, names[SCALE_BUG], kCuda, forward, backward, last_error};
  return &plugin;
}
