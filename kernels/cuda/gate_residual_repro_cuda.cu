// cuda-repro: gate_residual_repro_cuda.h.
#include "gate_residual_repro_cuda.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "../binned_sum.h"
#include "../gate_residual_math.h"
#include "../host/gate_residual_repro_host.h"
#include "../op_call_abi.h"
#include "../plugin_adapter.h"
#include "gate_residual_cuda.h"

namespace gatecheck {

namespace {

constexpr int kThreads = 128;

Status cuda_status(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status::success();
  return Status::error(ErrorKind::implementation, std::string("cuda-repro: ") + what + ": " + cudaGetErrorString(e));
}

// n states (consecutive) combined per element; any order gives the same
// words. Memory bound (64 states at 32 x 3072 are 201 MB): each thread keeps
// kInFlight states' loads in flight before it merges them.
constexpr int kInFlight = 8;
__global__ void combine_kernel(const uint64_t* states, int32_t n, int64_t elements, uint64_t* out) {
  const int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= elements) return;
  const int64_t words = elements * kBinnedWords;
  BinnedSum acc;
  acc.clear();
  for (int32_t k0 = 0; k0 < n; k0 += kInFlight) {
    ulonglong2 v[kInFlight][2];
#pragma unroll
    for (int i = 0; i < kInFlight; ++i) {
      if (k0 + i >= n) break;
      const ulonglong2* w = reinterpret_cast<const ulonglong2*>(states + (k0 + i) * words + e * kBinnedWords);
      v[i][0] = __ldg(w);
      v[i][1] = __ldg(w + 1);
    }
#pragma unroll
    for (int i = 0; i < kInFlight; ++i) {
      if (k0 + i >= n) break;
      const uint64_t ws[kBinnedWords] = {v[i][0].x, v[i][0].y, v[i][1].x, v[i][1].y};
      BinnedSum b;
      b.from_words(ws);
      acc.merge(b);
    }
  }
  uint64_t r[kBinnedWords];
  acc.to_words(r);
  ulonglong2* o = reinterpret_cast<ulonglong2*>(out + e * kBinnedWords);
  o[0] = make_ulonglong2(r[0], r[1]);
  o[1] = make_ulonglong2(r[2], r[3]);
}

template <class T>
__global__ void finalize_kernel(const uint64_t* state, int64_t elements, T* grad_gate) {
  const int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e < elements) grad_gate[e] = binned_finish_words<T>(state + e * kBinnedWords);
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
  return gate_residual_binned_partial_cuda(p, grad_out, index, y, state);
}

Status gate_residual_repro_combine_cuda(const gatecheck_problem& p, const uint64_t* states, int32_t n, uint64_t* out) {
  if (n < 0) return Status::error(ErrorKind::shape_mismatch, "combine: n=" + std::to_string(n) + " states, below 0");
  const int64_t elements = gate_residual_repro_state_words(p) / kBinnedWords;
  if (elements == 0) return Status::success();
  combine_kernel<<<blocks_for(elements), kThreads, 0, static_cast<cudaStream_t>(p.stream)>>>(states, n, elements, out);
  return cuda_status(cudaGetLastError(), "combine");
}

Status gate_residual_repro_finalize_cuda(const gatecheck_problem& p, const uint64_t* state, void* grad_gate) {
  const int64_t elements = gate_residual_repro_state_words(p) / kBinnedWords;
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
  // One call: the "cuda" backward's plan and tile kernel with binned sums,
  // then their fold per gate; a bad index is reported by name (nothing written).
  Status s = gate_residual_bwd_cuda_binned(p, grad_out, gate, index, y, grad_res, grad_gate, grad_y, nullptr);
  if (s.ok() && p.rows > 0) s = gate_residual_cuda_sync_status("gate_residual_bwd", p, index);
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
      kGateResidualReproStateText,
      ex_state_words, ex_partial, ex_combine, ex_finalize, ExAbi::last_error};
  return &ex;
}

}  // namespace gatecheck
