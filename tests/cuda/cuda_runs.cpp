#include "cuda_runs.h"

#include <cuda_runtime.h>

#include <cstring>
#include <memory>
#include <stdexcept>

#include "device_buffers.h"
#include "kernels/cuda/gate_residual_cuda.h"
#include "kernels/host/gate_residual_host.h"

namespace gatecheck {
namespace testing_cuda {

std::vector<uint8_t> to_storage(DType t, const std::vector<uint32_t>& bits) {
  const size_t e = size_t(dtype_size(t));
  std::vector<uint8_t> out(bits.size() * e);
  for (size_t i = 0; i < bits.size(); ++i) std::memcpy(&out[i * e], &bits[i], e);  // little-endian
  return out;
}

std::vector<uint32_t> from_storage(DType t, const std::vector<uint8_t>& bytes) {
  const size_t e = size_t(dtype_size(t));
  std::vector<uint32_t> out(bytes.size() / e, 0);
  for (size_t i = 0; i < out.size(); ++i) std::memcpy(&out[i], &bytes[i * e], e);
  return out;
}

namespace {
gatecheck_problem problem_of(const RawCase& c, gatecheck_device d, void* stream) {
  return gatecheck_problem{c.rows, c.dim, c.gates, int32_t(c.dtype), int32_t(d), stream};
}
}  // namespace

RawOutputs run_host(const RawCase& c) {
  const gatecheck_problem p = problem_of(c, GATECHECK_CPU, nullptr);
  auto res = to_storage(c.dtype, c.res), gate = to_storage(c.dtype, c.gate), y = to_storage(c.dtype, c.y),
       g = to_storage(c.dtype, c.grad_out);
  const size_t e = size_t(dtype_size(c.dtype));
  std::vector<uint8_t> out(res.size()), grad_res(res.size()), grad_y(res.size()),
      grad_gate(size_t(c.gates * c.dim) * e);
  RawOutputs o;
  o.fwd = gate_residual_fwd_host(p, res.data(), gate.data(), c.index.data(), y.data(), out.data());
  o.bwd = gate_residual_bwd_host(p, g.data(), gate.data(), c.index.data(), y.data(), grad_res.data(),
                                 grad_gate.data(), grad_y.data());
  o.out = from_storage(c.dtype, out);
  o.grad_res = from_storage(c.dtype, grad_res);
  o.grad_gate = from_storage(c.dtype, grad_gate);
  o.grad_y = from_storage(c.dtype, grad_y);
  return o;
}

RawOutputs run_cuda(const RawCase& c, const CudaPlacement& where) {
  cudaStream_t stream = nullptr;
  if (where.own_stream && cudaStreamCreate(&stream) != cudaSuccess) throw std::runtime_error("cudaStreamCreate");
  std::unique_ptr<CUstream_st, void (*)(cudaStream_t)> keep(stream, [](cudaStream_t s) {
    if (!s) return;
    gate_residual_cuda_release_stream(s);  // else each stream's workspace would outlive it
    cudaStreamDestroy(s);
  });
  const gatecheck_problem p = problem_of(c, GATECHECK_CUDA, where.stream ? static_cast<cudaStream_t>(where.stream) : stream);
  const size_t e = size_t(dtype_size(c.dtype));
  const size_t nb = size_t(c.rows * c.dim) * e, gb = size_t(c.gates * c.dim) * e;
  DeviceBuffer res(nb, where.offset[0]), gate(gb, where.offset[1]), y(nb, where.offset[2]),
      out(nb, where.offset[3]), g(nb, where.offset[4]), grad_res(nb, where.offset[5]),
      grad_gate(gb, where.offset[6]), grad_y(nb, where.offset[7]);
  DeviceBuffer index(size_t(c.rows) * 8);
  res.upload(to_storage(c.dtype, c.res).data());
  gate.upload(to_storage(c.dtype, c.gate).data());
  y.upload(to_storage(c.dtype, c.y).data());
  g.upload(to_storage(c.dtype, c.grad_out).data());
  index.upload(c.index.data());
  auto poison_outputs = [&] {
    for (DeviceBuffer* b : {&out, &grad_res, &grad_gate, &grad_y}) b->fill(where.poison);
  };
  poison_outputs();
  const auto* idx = static_cast<const int64_t*>(index.get());
  auto fwd = [&] { return gate_residual_fwd_cuda(p, res.get(), gate.get(), idx, y.get(), out.get()); };
  auto bwd = [&] {
    if (where.no_grad_res)
      return gate_residual_bwd_cuda_strided_no_grad_res(p, g.get(), gate.get(), c.dim, idx, y.get(), grad_gate.get(),
                                                        grad_y.get());
    return gate_residual_bwd_cuda(p, g.get(), gate.get(), idx, y.get(), grad_res.get(), grad_gate.get(),
                                  grad_y.get());
  };
  RawOutputs o;
  if (!where.capture_graph || where.warm_up) {
    o.fwd = fwd();
    if (o.fwd.ok()) o.fwd = gate_residual_cuda_sync_status("gate_residual_fwd", p, idx);
    o.bwd = bwd();
    if (o.bwd.ok()) o.bwd = gate_residual_cuda_sync_status("gate_residual_bwd", p, idx);
  }
  if (where.capture_graph && o.fwd.ok() && o.bwd.ok()) {
    if (!p.stream) throw std::runtime_error("capture_graph needs own_stream or stream");
    const auto s = static_cast<cudaStream_t>(p.stream);
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    std::string failed;
    if (cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) != cudaSuccess) failed = "cudaStreamBeginCapture";
    if (failed.empty()) {
      const Status f = fwd(), b = bwd();
      const cudaError_t end = cudaStreamEndCapture(s, &graph);
      if (!f.ok()) failed = "the forward, captured: " + f.message;
      else if (!b.ok()) failed = "the backward, captured: " + b.message;
      else if (end != cudaSuccess) failed = std::string("cudaStreamEndCapture: ") + cudaGetErrorString(end);
    }
    cudaGetLastError();  // a failed capture leaves its error; the message above has it
    if (failed.empty() && cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess) failed = "cudaGraphInstantiate";
    for (int i = 0; failed.empty() && i < where.replays; ++i) {
      poison_outputs();
      if (cudaGraphLaunch(exec, s) != cudaSuccess) failed = "cudaGraphLaunch";
      Status st = gate_residual_cuda_sync_status("gate_residual_fwd and bwd (graph)", p, idx);
      if (failed.empty() && !st.ok()) failed = st.message;
    }
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
    if (!failed.empty()) o.fwd = o.bwd = Status::error(ErrorKind::implementation, "CUDA graph: " + failed);
  }
  std::vector<uint8_t> host(nb);
  out.download(host.data());
  o.out = from_storage(c.dtype, host);
  grad_res.download(host.data());
  o.grad_res = from_storage(c.dtype, host);
  grad_y.download(host.data());
  o.grad_y = from_storage(c.dtype, host);
  std::vector<uint8_t> hg(gb);
  grad_gate.download(hg.data());
  o.grad_gate = from_storage(c.dtype, hg);
  return o;
}

std::string compare_outputs(const RawCase& c, const RawOutputs& cuda, const RawOutputs& host) {
  std::string msg;
  auto add = [&](const char* name, const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
    const std::string m = compare_bits(name, a, b, c.dim > 0 ? c.dim : 1);
    if (!m.empty()) msg += m + "\n";
  };
  add("out", cuda.out, host.out);
  add("grad_res", cuda.grad_res, host.grad_res);
  add("grad_gate", cuda.grad_gate, host.grad_gate);
  add("grad_y", cuda.grad_y, host.grad_y);
  return msg;
}

}  // namespace testing_cuda
}  // namespace gatecheck
