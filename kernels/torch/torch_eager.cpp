// torch-eager: gate_residual as LibTorch eager computes it, the way diffusers
// writes it: out = res + gate.index_select(0, idx) * y, and the backward by
// autograd on leaf tensors wrapped around the caller's buffers.
//
// The numerics are LibTorch's own, which is the point of this implementation:
//  - out: round(res + round(gate*y)), each op in fp32 rounded to the dtype;
//  - grad_res = g (add's backward passes the gradient through);
//  - grad_y = round(g * gate);
//  - grad_gate: index_select's backward, an index_add_ into a zeroed gate-shaped
//    buffer *in the dtype*: for bf16/f16 every row's term is rounded into the
//    running sum, which is why accuracy:grad_gate is not claimed there. On the
//    CPU (LibTorch 1.13) the rows are added in row order; on CUDA with atomics.
// LibTorch 1.13's CPU kernels support Half for index_select, mul, add and
// index_add_, so all three dtypes run on both devices.
#include "torch_eager.h"

#include "../plugin_adapter.h"
#include "torch_support.h"

#include <string>
#include <utility>

namespace gatecheck {

namespace {

using Abi = PluginAdapter<struct TorchEagerTag>;

using namespace torch_support;

// A view of a caller's [rows, cols] buffer (torch_support.h's wrap).
torch::Tensor wrap(const void* data, int64_t rows, int64_t cols, const torch::TensorOptions& o) {
  return torch_support::wrap(data, {rows, cols}, o);
}

// On cuda, index contents are checked on the host before index_select: an
// out-of-range index there is a device-side assert that would poison the CUDA
// context for the rest of the process. The copy gives the same error message
// as every other implementation.
Status check_index_on_device(const char* op, const gatecheck_problem& p, const torch::Tensor& idx) {
  const torch::Tensor host = idx.to(torch::kCPU).contiguous();
  return check_index_range(op, p, host.data_ptr<int64_t>());
}

struct Prepared {
  torch::TensorOptions opt, idx_opt;
  torch::Tensor idx;
};

Status prepare(const char* op, const gatecheck_problem& p, const int64_t* index, Prepared* out) {
  out->opt = options(p, scalar_type(p.dtype));
  out->idx_opt = options(p, torch::kLong);
  out->idx = torch::from_blob(const_cast<int64_t*>(index), {p.rows}, out->idx_opt);
  if (p.device == GATECHECK_CUDA) {
    torch::cuda::synchronize();  // inputs produced on the caller's stream are ready
    return check_index_on_device(op, p, out->idx);
  }
  return Status::success();
}

Status finish(const gatecheck_problem& p) {
  if (p.device == GATECHECK_CUDA) torch::cuda::synchronize();  // results visible on any stream
  return Status::success();
}

Status forward(const gatecheck_problem& p, const void* res, const void* gate, const int64_t* index,
               const void* y, void* out) {
  Prepared t;
  Status s = prepare("gate_residual_fwd", p, index, &t);
  if (!s.ok()) return s;
  torch::NoGradGuard no_grad;
  const torch::Tensor r = wrap(res, p.rows, p.dim, t.opt);
  const torch::Tensor g = wrap(gate, p.gates, p.dim, t.opt);
  const torch::Tensor v = wrap(y, p.rows, p.dim, t.opt);
  store(out, r + g.index_select(0, t.idx) * v, t.opt);
  return finish(p);
}

Status backward(const gatecheck_problem& p, const void* grad_out, const void* gate,
                const int64_t* index, const void* y, void* grad_res, void* grad_gate,
                void* grad_y) {
  Prepared t;
  Status s = prepare("gate_residual_bwd", p, index, &t);
  if (!s.ok()) return s;
  // Leaves of the forward graph. res is not an argument of the backward (its
  // value cannot change any gradient); a zero leaf stands in so that grad_res
  // still comes from autograd.
  const torch::Tensor res = torch::zeros({p.rows, p.dim}, t.opt).requires_grad_(true);
  // from_blob views are detached leaves; requires_grad makes autograd track them.
  const torch::Tensor g = wrap(gate, p.gates, p.dim, t.opt).requires_grad_(true);
  const torch::Tensor v = wrap(y, p.rows, p.dim, t.opt).requires_grad_(true);
  const torch::Tensor upstream = wrap(grad_out, p.rows, p.dim, t.opt);
  const torch::Tensor out = res + g.index_select(0, t.idx) * v;
  const auto grads = torch::autograd::grad({out}, {res, g, v}, {upstream},
                                           /*retain_graph=*/false, /*create_graph=*/false,
                                           /*allow_unused=*/true);
  // An unused input (an empty problem) has an undefined gradient: zeros.
  auto or_zeros = [](const torch::Tensor& grad, const torch::Tensor& like) {
    return grad.defined() ? grad : torch::zeros_like(like);
  };
  store(grad_res, or_zeros(grads[0], res), t.opt);
  store(grad_gate, or_zeros(grads[1], g), t.opt);
  store(grad_y, or_zeros(grads[2], v), t.opt);
  return finish(p);
}

// ---- the C ABI ------------------------------------------------------------

// Runs f behind the exception fence (torch_support.h).
template <class F>
int guarded(const char* op, F&& f) {
  return Abi::report(torch_support::guarded(op, std::forward<F>(f)));
}

template <uint32_t kDevices>
int abi_forward(const gatecheck_problem* p, const void* res, const void* gate, const int64_t* index,
                const void* y, void* out) {
  return guarded("gate_residual_fwd", [&] {
    if (!p) return Status::error(ErrorKind::null_pointer, "gate_residual_fwd: problem is null");
    Status s = check_fwd_args(*p, res, gate, index, y, out, kDevices,
                              /*index_on_host=*/p->device == GATECHECK_CPU);
    return s.ok() ? forward(*p, res, gate, index, y, out) : s;
  });
}

template <uint32_t kDevices>
int abi_backward(const gatecheck_problem* p, const void* grad_out, const void* gate,
                 const int64_t* index, const void* y, void* grad_res, void* grad_gate,
                 void* grad_y) {
  return guarded("gate_residual_bwd", [&] {
    if (!p) return Status::error(ErrorKind::null_pointer, "gate_residual_bwd: problem is null");
    Status s = check_bwd_args(*p, grad_out, gate, index, y, grad_res, grad_gate, grad_y, kDevices,
                              /*index_on_host=*/p->device == GATECHECK_CPU);
    return s.ok() ? backward(*p, grad_out, gate, index, y, grad_res, grad_gate, grad_y) : s;
  });
}

constexpr uint32_t kCpu = 1u << GATECHECK_CPU, kCuda = 1u << GATECHECK_CUDA;

}  // namespace

const gatecheck_plugin* torch_eager_plugin(Device d) {
  static const gatecheck_plugin cpu = {GATECHECK_ABI_VERSION, "torch-eager", kCpu,
                                       abi_forward<kCpu>, abi_backward<kCpu>, Abi::last_error};
  static const gatecheck_plugin cuda = {GATECHECK_ABI_VERSION, "torch-eager", kCuda,
                                        abi_forward<kCuda>, abi_backward<kCuda>, Abi::last_error};
  if (d == Device::cpu) return &cpu;
  return torch_support::torch_cuda_available() ? &cuda : nullptr;
}

}  // namespace gatecheck
