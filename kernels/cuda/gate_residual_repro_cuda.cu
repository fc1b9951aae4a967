// cuda-repro: gate_residual_repro_cuda.h.
#include "gate_residual_repro_cuda.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "../exact_sum.h"
#include "../gate_residual_math.h"
#include "../host/gate_residual_repro_host.h"
#include "../op_call_abi.h"
#include "../plugin_adapter.h"
#include "gate_residual_cuda.h"

namespace gatecheck {

namespace {

constexpr int kThreads = 128;
constexpr int64_t kTileRows = 64;

using ull = unsigned long long;

Status cuda_status(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status::success();
  return Status::error(ErrorKind::implementation, std::string("cuda-repro: ") + what + ": " + cudaGetErrorString(e));
}

// Adds a local state, normalised, to the global one with integer atomics.
__device__ void flush(uint64_t* g, uint64_t* w) {
  exact_sum_normalise(w);
  exact_sum_add_carrying(g, w, [](uint64_t* base, int k, uint64_t v) -> uint64_t {
    return atomicAdd(reinterpret_cast<ull*>(base + k), ull(v));
  });
}

template <class T>
__global__ void partial_kernel(const T* grad_out, const int64_t* index, const T* y, int64_t rows, int64_t dim,
                               int64_t gates, int64_t tile_rows, uint64_t* state) {
  const int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= dim) return;
  const int64_t r0 = int64_t(blockIdx.y) * tile_rows;
  const int64_t r1 = r0 + tile_rows < rows ? r0 + tile_rows : rows;
  uint64_t w[kExactSumWords];
  exact_sum_clear(w);
  int64_t cur = -1;
  int n = 0;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t k = index[r];
    if (k < 0 || k >= gates) continue;  // (checked before: never here)
    if (k != cur) {
      if (cur >= 0) flush(state + (cur * dim + j) * kExactSumWords, w);
      exact_sum_clear(w);
      cur = k;
      n = 0;
    }
    exact_sum_add(w, gate_residual_grad_gate_term(grad_out[r * dim + j], y[r * dim + j]));
    if (++n == kExactSumNormaliseEvery) {
      exact_sum_normalise(w);
      n = 0;
    }
  }
  if (cur >= 0) flush(state + (cur * dim + j) * kExactSumWords, w);
}

__global__ void normalise_kernel(uint64_t* state, int64_t elements) {
  const int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e < elements) exact_sum_normalise_unsigned(state + e * kExactSumWords);
}

__global__ void combine_kernel(const uint64_t* states, int32_t n, int64_t elements, uint64_t* out) {
  const int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= elements) return;
  uint64_t w[kExactSumWords];
  exact_sum_clear(w);
  const int64_t words = elements * kExactSumWords;
  for (int32_t k = 0; k < n; ++k) exact_sum_combine(w, states + k * words + e * kExactSumWords);
  exact_sum_normalise(w);
  for (int i = 0; i < kExactSumWords; ++i) out[e * kExactSumWords + i] = w[i];
}

template <class T>
__global__ void finalize_kernel(const uint64_t* state, int64_t elements, T* grad_gate) {
  const int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e < elements) grad_gate[e] = exact_sum_finish<T>(state + e * kExactSumWords);
}

unsigned blocks_for(int64_t n) { return unsigned((n + kThreads - 1) / kThreads); }

template <class F>
void dispatch(DType t, F&& f) {
  switch (t) {
    case DType::f32: f(float{}); break;
    case DType::f16: f(f16_t{}); break;
    case DType::bf16: f(bf16_t{}); break;
  }
}

}  // namespace

Status gate_residual_repro_partial_cuda(const gatecheck_problem& p, const void* grad_out, const int64_t* index,
                                        const void* y, uint64_t* state) {
  const auto stream = static_cast<cudaStream_t>(p.stream);
  const int64_t words = gate_residual_repro_state_words(p), elements = words / kExactSumWords;
  if (words == 0) return Status::success();
  Status s = cuda_status(cudaMemsetAsync(state, 0, size_t(words) * sizeof(uint64_t), stream), "cudaMemsetAsync");
  if (!s.ok()) return s;
  if (p.rows > 0) {
    // At most 65535 tiles down the grid: longer tiles past 4 million rows.
    const int64_t tile = std::max<int64_t>(kTileRows, (p.rows + 65534) / 65535);
    const dim3 grid(blocks_for(p.dim), unsigned((p.rows + tile - 1) / tile));
    dispatch(DType(p.dtype), [&](auto tag) {
      using T = decltype(tag);
      partial_kernel<T><<<grid, kThreads, 0, stream>>>(static_cast<const T*>(grad_out), index,
                                                        static_cast<const T*>(y), p.rows, p.dim, p.gates, tile,
                                                        state);
    });
  }
  normalise_kernel<<<blocks_for(elements), kThreads, 0, stream>>>(state, elements);
  return cuda_status(cudaGetLastError(), "partial");
}

Status gate_residual_repro_combine_cuda(const gatecheck_problem& p, const uint64_t* states, int32_t n, uint64_t* out) {
  if (n < 0 || n > kExactSumMaxStates)
    return Status::error(ErrorKind::shape_mismatch, "combine: n=" + std::to_string(n) + " states, outside [0, " +
                                                        std::to_string(kExactSumMaxStates) + "]");
  const int64_t elements = gate_residual_repro_state_words(p) / kExactSumWords;
  if (elements == 0) return Status::success();
  combine_kernel<<<blocks_for(elements), kThreads, 0, static_cast<cudaStream_t>(p.stream)>>>(states, n, elements, out);
  return cuda_status(cudaGetLastError(), "combine");
}

Status gate_residual_repro_finalize_cuda(const gatecheck_problem& p, const uint64_t* state, void* grad_gate) {
  const int64_t elements = gate_residual_repro_state_words(p) / kExactSumWords;
  if (elements == 0) return Status::success();
  dispatch(DType(p.dtype), [&](auto tag) {
    using T = decltype(tag);
    finalize_kernel<T><<<blocks_for(elements), kThreads, 0, static_cast<cudaStream_t>(p.stream)>>>(
        state, elements, static_cast<T*>(grad_gate));
  });
  return cuda_status(cudaGetLastError(), "finalize");
}

namespace {

// A device state for the length of a call.
struct DeviceState {
  uint64_t* ptr = nullptr;
  cudaStream_t stream;
  explicit DeviceState(const gatecheck_problem& p) : stream(static_cast<cudaStream_t>(p.stream)) {}
  Status alloc(int64_t words) {
    return words ? cuda_status(cudaMallocAsync(reinterpret_cast<void**>(&ptr), size_t(words) * sizeof(uint64_t), stream),
                               "cudaMallocAsync")
                 : Status::success();
  }
  ~DeviceState() {
    if (ptr) cudaFreeAsync(ptr, stream);
  }
};

}  // namespace

Status gate_residual_bwd_cuda_repro(const gatecheck_problem& p, const void* grad_out, const void* gate,
                                    const int64_t* index, const void* y, void* grad_res, void* grad_gate,
                                    void* grad_y) {
  // The "cuda" backward checks the arguments and the index (writing nothing
  // on a bad one) and makes grad_res and grad_y; grad_gate is then remade.
  Status s = gate_residual_bwd_cuda(p, grad_out, gate, index, y, grad_res, grad_gate, grad_y);
  if (s.ok() && p.rows > 0) s = gate_residual_cuda_sync_status("gate_residual_bwd", p, index);
  if (!s.ok()) return s;
  DeviceState st(p);
  s = st.alloc(gate_residual_repro_state_words(p));
  if (s.ok()) s = gate_residual_repro_partial_cuda(p, grad_out, index, y, st.ptr);
  if (s.ok()) s = gate_residual_repro_finalize_cuda(p, st.ptr, grad_gate);
  if (s.ok()) s = cuda_status(cudaStreamSynchronize(st.stream), "cudaStreamSynchronize");
  return s;
}

namespace {

using Abi = PluginAdapter<struct ReproCudaTag>;

int abi_forward(const gatecheck_problem* p, const void* res, const void* gate, const int64_t* index, const void* y,
                void* out) {
  if (!p) return Abi::null_problem("gate_residual_fwd");
  Status s = gate_residual_fwd_cuda(*p, res, gate, index, y, out);
  if (s.ok() && p->rows > 0) s = gate_residual_cuda_sync_status("gate_residual_fwd", *p, index);
  return Abi::report(s);
}

int abi_backward(const gatecheck_problem* p, const void* grad_out, const void* gate, const int64_t* index,
                 const void* y, void* grad_res, void* grad_gate, void* grad_y) {
  if (!p) return Abi::null_problem("gate_residual_bwd");
  return Abi::report(gate_residual_bwd_cuda_repro(*p, grad_out, gate, index, y, grad_res, grad_gate, grad_y));
}

// The exchange: device tensors in the calls, host states (copied).
using ExAbi = PluginAdapter<struct ReproCudaExchangeTag>;

int64_t ex_state_words(const gatecheck_problem* p) { return p ? gate_residual_repro_state_words(*p) : 0; }

int ex_partial(const gatecheck_call* c, uint64_t* state) {
  OpCall call;
  Status s = op_call_from_abi(gate_residual_schema(), Pass::backward, c, &call);
  if (!s.ok()) return ExAbi::report(s);
  if (!state) return ExAbi::report(Status::error(ErrorKind::null_pointer, "partial: state is null"));
  const OpSchema& op = gate_residual_schema();
  auto in = [&](const char* n) { return call.inputs[size_t(op.input_index(n))].data; };
  const auto* index = static_cast<const int64_t*>(in("index"));
  if (call.p.rows > 0) {  // the index, checked on the host (a test path: the copy is cheap enough)
    std::vector<int64_t> host(size_t(call.p.rows));
    const auto stream = static_cast<cudaStream_t>(call.p.stream);  // where the inputs were put
    s = cuda_status(cudaMemcpyAsync(host.data(), index, host.size() * sizeof(int64_t), cudaMemcpyDeviceToHost, stream),
                    "cudaMemcpyAsync");
    if (s.ok()) s = cuda_status(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    for (size_t r = 0; s.ok() && r < host.size(); ++r)
      if (host[r] < 0 || host[r] >= call.p.gates)
        s = Status::error(ErrorKind::index_out_of_range, "partial: index[" + std::to_string(r) + "]=" +
                                                             std::to_string(host[r]) + " outside [0, " +
                                                             std::to_string(call.p.gates) + ")");
    if (!s.ok()) return ExAbi::report(s);
  }
  const int64_t words = gate_residual_repro_state_words(call.p);
  DeviceState st(call.p);
  s = st.alloc(words);
  if (s.ok()) s = gate_residual_repro_partial_cuda(call.p, in("grad_out"), index, in("y"), st.ptr);
  if (s.ok() && words)
    s = cuda_status(cudaMemcpyAsync(state, st.ptr, size_t(words) * sizeof(uint64_t), cudaMemcpyDeviceToHost, st.stream),
                    "cudaMemcpyAsync");
  if (s.ok()) s = cuda_status(cudaStreamSynchronize(st.stream), "cudaStreamSynchronize");
  return ExAbi::report(s);
}

// Host states: the host's combine.
int ex_combine(const gatecheck_problem* p, const uint64_t* const* states, int32_t n, uint64_t* out) {
  const gatecheck_split_exchange* host = gate_residual_repro_host_exchange();
  const int rc = host->combine(p, states, n, out);
  return rc ? ExAbi::report(Status::error(ErrorKind(rc), host->last_error())) : 0;
}

int ex_finalize(const gatecheck_call* c, const uint64_t* state) {
  OpCall call;
  Status s = op_call_from_abi(gate_residual_schema(), Pass::backward, c, &call);
  if (!s.ok()) return ExAbi::report(s);
  void* grad_gate = call.outputs[size_t(gate_residual_schema().output_index("grad_gate"))].data;
  const int64_t words = gate_residual_repro_state_words(call.p);
  if (words && (!state || !grad_gate))
    return ExAbi::report(Status::error(ErrorKind::null_pointer, "finalize: state or grad_gate is null"));
  DeviceState st(call.p);
  s = st.alloc(words);
  if (s.ok() && words)
    s = cuda_status(cudaMemcpyAsync(st.ptr, state, size_t(words) * sizeof(uint64_t), cudaMemcpyHostToDevice, st.stream),
                    "cudaMemcpyAsync");
  if (s.ok()) s = gate_residual_repro_finalize_cuda(call.p, st.ptr, grad_gate);
  if (s.ok()) s = cuda_status(cudaStreamSynchronize(st.stream), "cudaStreamSynchronize");
  return ExAbi::report(s);
}

}  // namespace

const gatecheck_plugin* gate_residual_repro_cuda_plugin() {
  static const gatecheck_plugin plugin = {GATECHECK_ABI_VERSION, "cuda-repro", 1u << GATECHECK_CUDA, abi_forward,
                                          abi_backward, Abi::last_error};
  return &plugin;
}

const gatecheck_split_exchange* gate_residual_repro_cuda_exchange() {
  static const gatecheck_split_exchange ex = {
      GATECHECK_ABI_VERSION_2, "gate_residual",
      "grad_gate exact: gates x dim x 6 int64 words (fixed point from 2^-149, radix 2^56, special-value counts); "
      "combine = integer sum",
      ex_state_words, ex_partial, ex_combine, ex_finalize, ExAbi::last_error};
  return &ex;
}

}  // namespace gatecheck
