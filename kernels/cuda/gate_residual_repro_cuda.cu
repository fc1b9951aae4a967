// cuda-repro: gate_residual_repro_cuda.h.
#include "gate_residual_repro_cuda.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "../binned_sum.h"
#include "../gate_residual_dtype.h"
#include "../gate_residual_math.h"
#include "../host/gate_residual_repro_host.h"
#include "../op_call_abi.h"
#include "../plugin_adapter.h"
#include "binned_state_cuda.cuh"
#include "cuda_error_status.h"
#include "gate_residual_cuda.h"

namespace gatecheck {

namespace {

Status cuda_status(cudaError_t e, const char* what) {
  return cuda_error_status("cuda-repro", (std::string(" in ") + what).c_str(), e);
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
  const CudaTuning& t = gate_residual_cuda_tuning();
  binned_cuda::CombineShape shape;
  shape.threads = t.combine_threads;
  shape.blocks_per_sm = t.combine_blocks_per_sm;
  shape.streaming = !t.combine_cached;
  return cuda_status(binned_cuda::launch_combine(states, n, elements, out, static_cast<cudaStream_t>(p.stream), shape),
                     "combine");
}

Status gate_residual_repro_finalize_cuda(const gatecheck_problem& p, const uint64_t* state, void* grad_gate) {
  const int64_t elements = gate_residual_repro_state_words(p) / kBinnedWords;
  if (elements == 0) return Status::success();
  cudaError_t e = cudaSuccess;
  dispatch_dtype(DType(p.dtype), [&](auto tag) {
    using T = decltype(tag);
    e = binned_cuda::launch_finalize(state, elements, static_cast<T*>(grad_gate), static_cast<cudaStream_t>(p.stream));
  });
  return cuda_status(e, "finalize");
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

// The "cuda" forward, unchanged.
int abi_forward(const gatecheck_problem* p, const void* res, const void* gate, const int64_t* index, const void* y,
                void* out) {
  return Abi::forward_of(gate_residual_cuda_plugin(), p, res, gate, index, y, out);
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
  auto in = [&](const char* n) { return call.input(n).data; };
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
  return ExAbi::combine_of(gate_residual_repro_host_exchange(), p, states, n, out);
}

int ex_finalize(const gatecheck_call* c, const uint64_t* state) {
  OpCall call;
  Status s = op_call_from_abi(gate_residual_schema(), Pass::backward, c, &call);
  if (!s.ok()) return ExAbi::report(s);
  void* grad_gate = call.output("grad_gate").data;
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
