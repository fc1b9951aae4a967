// gatecheck::gate_residual as a LibTorch operator with autograd, on the CUDA
// kernels: out = res + gate[index] * y. Contract, errors and CUDA graphs:
// kernels/torch_op/README.md.
//
//   torch.ops.gatecheck.gate_residual(res, gate, index, y) -> out
//   torch.ops.gatecheck.gate_residual_backward(grad_out, gate, index, y) -> (grad_gate, grad_y)
//   torch.ops.gatecheck.check_errors()   (every op's index errors: torch_op_errors.h)
//
// Registered: the schemas; CUDA kernels; Meta kernels (shapes only, for
// FakeTensor and torch.compile); an Autograd kernel that calls the op below
// autograd through the dispatcher, so that a tracer sees the op and its
// backward op, not the kernels. The backward returns grad_out itself as
// grad_res, as torch eager does for a sum, and the kernels skip that write.
//
// No host sync by default: a bad index is found on the device (nothing is
// written), and raised by the next call of the op on that stream once the
// device has finished the bad call, or by check_errors(), which waits.
// GATECHECK_OP_CHECKED=1 (read at the first call) waits after every call and
// raises from the call itself.
#include <ATen/core/Tensor.h>
#include <ATen/core/LegacyTypeDispatch.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/empty.h>
#include <c10/core/DeviceGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

#include <optional>
#include <tuple>

#include "../cuda/gate_residual_cuda.h"
#include "torch_op_errors.h"

namespace gatecheck {
namespace {

using torch_op::check;
using torch_op::checked_mode;

constexpr const char* kOp = torch_op::kGateResidualOp;

int32_t abi_dtype(const at::Tensor& t) { return torch_op::abi_dtype(kOp, t); }

// What the Meta and the CUDA kernels both check (no sizes: those may be symbolic).
void check_kinds(const at::Tensor& x, const char* x_name, const at::Tensor& gate, const at::Tensor& index,
                 const at::Tensor& y) {
  TORCH_CHECK(x.dim() == 2, kOp, ": ", x_name, " must be 2-D [rows, dim], got ", x.dim(), "-D");
  TORCH_CHECK(y.dim() == 2, kOp, ": y must be 2-D [rows, dim], got ", y.dim(), "-D");
  TORCH_CHECK(gate.dim() == 2, kOp, ": gate must be 2-D [gates, dim], got ", gate.dim(), "-D");
  abi_dtype(x);
  TORCH_CHECK(gate.scalar_type() == x.scalar_type() && y.scalar_type() == x.scalar_type(), kOp, ": ", x_name,
              ", gate and y must share one dtype, got ", x.scalar_type(), ", ", gate.scalar_type(), ", ",
              y.scalar_type());
  TORCH_CHECK(index.scalar_type() == at::kLong, kOp, ": index must be int64, got ", index.scalar_type());
  TORCH_CHECK(index.dim() == 1, kOp, ": index must be 1-D, got ", index.dim(), "-D");
}

// The CUDA kernels' checks on real sizes and devices.
void check_cuda(const at::Tensor& x, const char* x_name, const at::Tensor& gate, const at::Tensor& index,
                const at::Tensor& y) {
  check_kinds(x, x_name, gate, index, y);
  TORCH_CHECK(x.is_cuda(), kOp, ": ", x_name, " must be a CUDA tensor, got ", x.device());
  auto same_device = [&](const at::Tensor& t, const char* name) {
    TORCH_CHECK(t.device() == x.device(), kOp, ": ", name, " is on ", t.device(), ", ", x_name, " on ", x.device());
  };
  same_device(gate, "gate");
  same_device(index, "index");
  same_device(y, "y");
  TORCH_CHECK(x.sizes() == y.sizes(), kOp, ": ", x_name, " ", x.sizes(), " and y ", y.sizes(), " differ");
  TORCH_CHECK(gate.size(1) == x.size(1), kOp, ": gate has ", gate.size(1), " columns, ", x_name, " has ",
              x.size(1));
  const int64_t s = index.size(0), rows = x.size(0);
  TORCH_CHECK(s == rows || (s > 0 && rows % s == 0), kOp, ": rows = ", rows,
              " is neither the index length nor a multiple of it (the shared-index form), S = ", s);
}

// Expands the shared-index form to one entry per row (a small int64 copy).
at::Tensor full_index(const at::Tensor& index, int64_t rows) {
  return index.size(0) == rows ? index.contiguous() : index.repeat({rows / index.size(0)}).contiguous();
}

// gate as the kernels take it: unit column stride, any row stride.
at::Tensor gate_view(const at::Tensor& gate) {
  if (gate.size(1) <= 1 || gate.stride(1) == 1) {
    if (gate.size(0) <= 1 || gate.stride(0) >= gate.size(1)) return gate;
  }
  return gate.contiguous();
}

int64_t row_stride(const at::Tensor& gate) { return gate.size(0) <= 1 ? gate.size(1) : gate.stride(0); }

gatecheck_problem problem(const at::Tensor& x, const at::Tensor& gate) {
  return gatecheck_problem{x.size(0), x.size(1), gate.size(0), abi_dtype(x), GATECHECK_CUDA,
                           c10::cuda::getCurrentCUDAStream(x.device().index()).stream()};
}

// Before a call: an earlier call's index error on this stream (of any op),
// if the device has reported one. After it, where the call cannot leave a
// report (dim = 0: only the index check runs) or in checked mode: wait and check.
void before_call(const gatecheck_problem& p) { torch_op::raise_pending(p.stream); }
void after_call(const char* what, const gatecheck_problem& p, const at::Tensor& index) {
  if (p.rows > 0 && (checked_mode() || p.dim == 0)) torch_op::raise_own(what, p, index.data_ptr<int64_t>());
}

at::Tensor forward_cuda(const at::Tensor& res_in, const at::Tensor& gate_in, const at::Tensor& index_in,
                        const at::Tensor& y_in) {
  check_cuda(res_in, "res", gate_in, index_in, y_in);
  const c10::DeviceGuard device(res_in.device());
  const at::Tensor res = res_in.contiguous(), y = y_in.contiguous(), gate = gate_view(gate_in);
  const gatecheck_problem p = problem(res, gate);
  before_call(p);
  const at::Tensor index = full_index(index_in, p.rows);
  at::Tensor out = at::empty(res.sizes(), res.options());
  check(gate_residual_fwd_cuda_strided(p, res.data_ptr(), gate.data_ptr(), row_stride(gate),
                                       index.data_ptr<int64_t>(), y.data_ptr(), out.data_ptr()),
        p.stream);
  after_call("gatecheck::gate_residual (forward)", p, index);
  return out;
}

// grad_gate (dense, gate's shape) and grad_y; grad_res is grad_out itself.
std::tuple<at::Tensor, at::Tensor> backward_cuda(const at::Tensor& grad_out, const at::Tensor& gate_in,
                                                 const at::Tensor& index_in, const at::Tensor& y_in) {
  check_cuda(grad_out, "grad_out", gate_in, index_in, y_in);
  const c10::DeviceGuard device(grad_out.device());
  const at::Tensor g = grad_out.contiguous(), y = y_in.contiguous(), gate = gate_view(gate_in);
  const gatecheck_problem p = problem(g, gate);
  before_call(p);
  const at::Tensor index = full_index(index_in, p.rows);
  at::Tensor grad_y = at::empty(g.sizes(), g.options());
  at::Tensor grad_gate = at::empty({gate.size(0), gate.size(1)}, g.options());
  check(gate_residual_bwd_cuda_strided_no_grad_res(p, g.data_ptr(), gate.data_ptr(), row_stride(gate),
                                                   index.data_ptr<int64_t>(), y.data_ptr(), grad_gate.data_ptr(),
                                                   grad_y.data_ptr()),
        p.stream);
  after_call("gatecheck::gate_residual (backward)", p, index);
  return {grad_gate, grad_y};
}

// Shapes, dtypes and strides of the outputs, as the CUDA kernels make them.
at::Tensor forward_meta(const at::Tensor& res, const at::Tensor& gate, const at::Tensor& index,
                        const at::Tensor& y) {
  check_kinds(res, "res", gate, index, y);
  return at::empty_symint(res.sym_sizes(), res.options());
}
std::tuple<at::Tensor, at::Tensor> backward_meta(const at::Tensor& grad_out, const at::Tensor& gate,
                                                 const at::Tensor& index, const at::Tensor& y) {
  check_kinds(grad_out, "grad_out", gate, index, y);
  return {at::empty_symint(gate.sym_sizes(), grad_out.options()),
          at::empty_symint(grad_out.sym_sizes(), grad_out.options())};
}

// Every op's pending index errors on the current device (their reports name their op).
void check_errors() {
  const Status s = gate_residual_cuda_wait_and_take_reports(kOp);
  TORCH_CHECK(s.ok(), s.message);
}

using ForwardFn = at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&);
using BackwardFn = std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                                      const at::Tensor&);
const c10::TypedOperatorHandle<ForwardFn>& forward_op() {
  static const auto h =
      c10::Dispatcher::singleton().findSchemaOrThrow("gatecheck::gate_residual", "").typed<ForwardFn>();
  return h;
}
const c10::TypedOperatorHandle<BackwardFn>& backward_op() {
  static const auto h =
      c10::Dispatcher::singleton().findSchemaOrThrow("gatecheck::gate_residual_backward", "").typed<BackwardFn>();
  return h;
}

// The backward op's own gradient is not implemented: say so if asked for
// (double backward), rather than let it pass as zero.
class BackwardFunction : public torch::autograd::Function<BackwardFunction> {
 public:
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext*, const at::Tensor& grad_out,
                                                const at::Tensor& gate, const at::Tensor& index,
                                                const at::Tensor& y) {
    at::AutoDispatchBelowADInplaceOrView below;
    auto [grad_gate, grad_y] = backward_op().call(grad_out, gate, index, y);
    return {grad_gate, grad_y};
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext*, torch::autograd::variable_list) {
    TORCH_CHECK(false, kOp, ": double backward (a gradient of the backward) is not implemented");
    return {};
  }
};

std::tuple<at::Tensor, at::Tensor> backward_autograd(const at::Tensor& grad_out, const at::Tensor& gate,
                                                     const at::Tensor& index, const at::Tensor& y) {
  const auto outs = BackwardFunction::apply(grad_out, gate, index, y);
  return {outs[0], outs[1]};
}

class GateResidualFunction : public torch::autograd::Function<GateResidualFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& res, const at::Tensor& gate,
                            const at::Tensor& index, const at::Tensor& y) {
    ctx->save_for_backward({gate, index, y});
    at::AutoDispatchBelowADInplaceOrView below;
    return forward_op().call(res, gate, index, y);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& grad_out = grads[0];
    // Outside create_graph, straight to the kernels (no autograd node for the
    // backward op: it would only cost host time).
    std::optional<at::AutoDispatchBelowADInplaceOrView> below;
    if (!at::GradMode::is_enabled()) below.emplace();
    auto [grad_gate, grad_y] = backward_op().call(grad_out, saved[0], saved[1], saved[2]);
    return {grad_out, grad_gate, at::Tensor(), grad_y};  // grad_res: the incoming gradient itself
  }
};

at::Tensor forward_autograd(const at::Tensor& res, const at::Tensor& gate, const at::Tensor& index,
                            const at::Tensor& y) {
  return GateResidualFunction::apply(res, gate, index, y);
}

}  // namespace
}  // namespace gatecheck

TORCH_LIBRARY(gatecheck, m) {
  m.def("gate_residual(Tensor res, Tensor gate, Tensor index, Tensor y) -> Tensor");
  m.def("gate_residual_backward(Tensor grad_out, Tensor gate, Tensor index, Tensor y) -> (Tensor, Tensor)");
  m.def("check_errors() -> ()", &gatecheck::check_errors);
}
TORCH_LIBRARY_IMPL(gatecheck, CUDA, m) {
  m.impl("gate_residual", &gatecheck::forward_cuda);
  m.impl("gate_residual_backward", &gatecheck::backward_cuda);
}
TORCH_LIBRARY_IMPL(gatecheck, Meta, m) {
  m.impl("gate_residual", &gatecheck::forward_meta);
  m.impl("gate_residual_backward", &gatecheck::backward_meta);
}
TORCH_LIBRARY_IMPL(gatecheck, Autograd, m) {
  m.impl("gate_residual", &gatecheck::forward_autograd);
  m.impl("gate_residual_backward", &gatecheck::backward_autograd);
}
