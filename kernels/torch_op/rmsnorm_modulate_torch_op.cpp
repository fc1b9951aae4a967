// gatecheck::rmsnorm_modulate as a LibTorch operator with autograd, on the
// CUDA kernels (kernels/rmsnorm_modulate.h is the contract):
//   out = RN(RN(w * (rstd * x)) * RN(1 + scale[index])) + shift[index]
//
//   torch.ops.gatecheck.rmsnorm_modulate(x, w, shift, scale, index, eps=1e-6) -> out
//   torch.ops.gatecheck.rmsnorm_modulate_backward(grad_out, x, w, scale, index, eps)
//       -> (dx, dweight, dshift, dscale)
//
// Registered as gate_residual's op is (gate_residual_torch_op.cpp): the
// schemas, CUDA kernels, Meta kernels (shapes only, for FakeTensor and
// torch.compile), and an Autograd kernel that calls the op and its backward
// op through the dispatcher. eps is a float without a gradient; index gets
// none. No host sync: a bad index is raised by the next call of an op on
// the stream or by check_errors() (torch_op_errors.h); GATECHECK_OP_CHECKED=1
// makes each call wait and raise its own.
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

#include "../cuda/rmsnorm_modulate_cuda.h"
#include "../rmsnorm_modulate.h"
#include "torch_op_errors.h"

namespace gatecheck {
namespace {

constexpr const char* kOp = "gatecheck::rmsnorm_modulate";

// What the Meta and the CUDA kernels both check (no sizes: those may be symbolic).
void check_kinds(const at::Tensor& x, const char* x_name, const at::Tensor& w, const at::Tensor& table,
                 const char* table_name, const at::Tensor& scale, const at::Tensor& index) {
  TORCH_CHECK(x.dim() == 2, kOp, ": ", x_name, " must be 2-D [rows, dim], got ", x.dim(), "-D");
  TORCH_CHECK(w.dim() == 1, kOp, ": w must be 1-D [dim], got ", w.dim(), "-D");
  TORCH_CHECK(table.dim() == 2, kOp, ": ", table_name, " must be 2-D [gates, dim], got ", table.dim(), "-D");
  TORCH_CHECK(scale.dim() == 2, kOp, ": scale must be 2-D [gates, dim], got ", scale.dim(), "-D");
  torch_op::abi_dtype(kOp, x);
  for (const auto& [t, name] : {std::pair<const at::Tensor&, const char*>{w, "w"}, {table, table_name},
                                {scale, "scale"}})
    TORCH_CHECK(t.scalar_type() == x.scalar_type(), kOp, ": ", name, " has dtype ", t.scalar_type(), ", ", x_name,
                " has ", x.scalar_type());
  TORCH_CHECK(index.scalar_type() == at::kLong, kOp, ": index must be int64, got ", index.scalar_type());
  TORCH_CHECK(index.dim() == 1, kOp, ": index must be 1-D [rows], got ", index.dim(), "-D");
}

void check_devices(const at::Tensor& x, const char* x_name,
                   std::initializer_list<std::pair<const at::Tensor*, const char*>> ts) {
  TORCH_CHECK(x.is_cuda(), kOp, ": ", x_name, " must be a CUDA tensor, got ", x.device());
  for (const auto& [t, name] : ts)
    TORCH_CHECK(t->device() == x.device(), kOp, ": ", name, " is on ", t->device(), ", ", x_name, " on ",
                x.device());
}

gatecheck_problem problem(const at::Tensor& x, int64_t gates) {
  return gatecheck_problem{x.size(0), x.size(1), gates, torch_op::abi_dtype(kOp, x), GATECHECK_CUDA,
                           c10::cuda::getCurrentCUDAStream(x.device().index()).stream()};
}

// A tensor as the contract's call takes it: [rows, cols] of its role.
TensorBuf buf(const at::Tensor& t) {
  if (t.dim() == 1) return {t.data_ptr(), t.scalar_type() == at::kLong ? t.size(0) : 1,
                            t.scalar_type() == at::kLong ? 1 : t.size(0)};
  return {t.data_ptr(), t.size(0), t.size(1)};
}

// The call with every tensor given; the contract's checks (shapes against x's
// rows and dim and the table's gates, eps positive and finite), raised.
OpCall make_call(Pass pass, const gatecheck_problem& p, double eps,
                 std::initializer_list<std::pair<const char*, const at::Tensor*>> ins,
                 std::initializer_list<std::pair<const char*, const at::Tensor*>> outs) {
  const OpSchema& op = rmsnorm_modulate_schema();
  OpCall c = OpCall::shaped(op, pass, p);
  for (const auto& [name, t] : ins) c.input(name) = buf(*t);
  for (const auto& [name, t] : outs) c.output(name) = buf(*t);
  c.scalars[size_t(op.scalar_index("eps"))] = eps;
  torch_op::check(check_call(c, 1u << GATECHECK_CUDA, /*index_on_host=*/false), p.stream);
  return c;
}

// Queues the kernels (no wait), in scratch from PyTorch's allocator: stream
// ordered, and a CUDA graph's private pool while capturing.
void run(const OpCall& c, const at::Tensor& like, const char* what) {
  torch_op::raise_pending(c.p.stream);
  const at::Tensor scratch =
      at::empty({rmsnorm_modulate_cuda_deferred_scratch_bytes(c)}, like.options().dtype(at::kByte));
  torch_op::check(rmsnorm_modulate_cuda_run_deferred(c, scratch.data_ptr(), kOp), c.p.stream);
  if (c.p.rows > 0 && torch_op::checked_mode()) torch_op::raise_own(what, c.p, c.index());
}

at::Tensor forward_cuda(const at::Tensor& x_in, const at::Tensor& w_in, const at::Tensor& shift_in,
                        const at::Tensor& scale_in, const at::Tensor& index_in, double eps) {
  check_kinds(x_in, "x", w_in, shift_in, "shift", scale_in, index_in);
  check_devices(x_in, "x", {{&w_in, "w"}, {&shift_in, "shift"}, {&scale_in, "scale"}, {&index_in, "index"}});
  const c10::DeviceGuard device(x_in.device());
  const at::Tensor x = x_in.contiguous(), w = w_in.contiguous(), shift = shift_in.contiguous(),
                   scale = scale_in.contiguous(), index = index_in.contiguous();
  const gatecheck_problem p = problem(x, shift.size(0));
  at::Tensor out = at::empty(x.sizes(), x.options());
  const OpCall c = make_call(Pass::forward, p, eps,
                             {{"x", &x}, {"w", &w}, {"shift", &shift}, {"scale", &scale}, {"index", &index}},
                             {{"out", &out}});
  run(c, x, "gatecheck::rmsnorm_modulate (forward)");
  return out;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> backward_cuda(const at::Tensor& g_in, const at::Tensor& x_in,
                                                                         const at::Tensor& w_in,
                                                                         const at::Tensor& scale_in,
                                                                         const at::Tensor& index_in, double eps) {
  check_kinds(x_in, "x", w_in, g_in, "grad_out", scale_in, index_in);
  TORCH_CHECK(g_in.sizes() == x_in.sizes(), kOp, ": grad_out ", g_in.sizes(), " and x ", x_in.sizes(), " differ");
  check_devices(x_in, "x", {{&g_in, "grad_out"}, {&w_in, "w"}, {&scale_in, "scale"}, {&index_in, "index"}});
  const c10::DeviceGuard device(x_in.device());
  const at::Tensor g = g_in.contiguous(), x = x_in.contiguous(), w = w_in.contiguous(), scale = scale_in.contiguous(),
                   index = index_in.contiguous();
  const gatecheck_problem p = problem(x, scale.size(0));
  at::Tensor dx = at::empty(x.sizes(), x.options()), dw = at::empty(w.sizes(), x.options()),
             dshift = at::empty(scale.sizes(), x.options()), dscale = at::empty(scale.sizes(), x.options());
  const OpCall c = make_call(Pass::backward, p, eps,
                             {{"x", &x}, {"w", &w}, {"scale", &scale}, {"index", &index}, {"grad_out", &g}},
                             {{"dx", &dx}, {"dweight", &dw}, {"dshift", &dshift}, {"dscale", &dscale}});
  run(c, x, "gatecheck::rmsnorm_modulate (backward)");
  return {dx, dw, dshift, dscale};
}

// Shapes, dtypes and strides of the outputs, as the CUDA kernels make them.
at::Tensor forward_meta(const at::Tensor& x, const at::Tensor& w, const at::Tensor& shift, const at::Tensor& scale,
                        const at::Tensor& index, double) {
  check_kinds(x, "x", w, shift, "shift", scale, index);
  return at::empty_symint(x.sym_sizes(), x.options());
}
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> backward_meta(const at::Tensor& g, const at::Tensor& x,
                                                                         const at::Tensor& w, const at::Tensor& scale,
                                                                         const at::Tensor& index, double) {
  check_kinds(x, "x", w, g, "grad_out", scale, index);
  return {at::empty_symint(x.sym_sizes(), x.options()), at::empty_symint(w.sym_sizes(), x.options()),
          at::empty_symint(scale.sym_sizes(), x.options()), at::empty_symint(scale.sym_sizes(), x.options())};
}

using ForwardFn = at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                             const at::Tensor&, double);
using Grads = std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor>;
using BackwardFn = Grads(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                         const at::Tensor&, double);
const c10::TypedOperatorHandle<ForwardFn>& forward_op() {
  static const auto h =
      c10::Dispatcher::singleton().findSchemaOrThrow("gatecheck::rmsnorm_modulate", "").typed<ForwardFn>();
  return h;
}
const c10::TypedOperatorHandle<BackwardFn>& backward_op() {
  static const auto h =
      c10::Dispatcher::singleton().findSchemaOrThrow("gatecheck::rmsnorm_modulate_backward", "").typed<BackwardFn>();
  return h;
}

// The backward op's own gradient is not implemented: say so if asked for
// (double backward), rather than let it pass as zero.
class BackwardFunction : public torch::autograd::Function<BackwardFunction> {
 public:
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext*, const at::Tensor& g,
                                                const at::Tensor& x, const at::Tensor& w, const at::Tensor& scale,
                                                const at::Tensor& index, double eps) {
    at::AutoDispatchBelowADInplaceOrView below;
    auto [dx, dw, dshift, dscale] = backward_op().call(g, x, w, scale, index, eps);
    return {dx, dw, dshift, dscale};
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext*, torch::autograd::variable_list) {
    TORCH_CHECK(false, kOp, ": double backward (a gradient of the backward) is not implemented");
    return {};
  }
};

Grads backward_autograd(const at::Tensor& g, const at::Tensor& x, const at::Tensor& w, const at::Tensor& scale,
                        const at::Tensor& index, double eps) {
  const auto o = BackwardFunction::apply(g, x, w, scale, index, eps);
  return {o[0], o[1], o[2], o[3]};
}

class RmsnormModulateFunction : public torch::autograd::Function<RmsnormModulateFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& w,
                            const at::Tensor& shift, const at::Tensor& scale, const at::Tensor& index, double eps) {
    ctx->save_for_backward({x, w, scale, index});
    ctx->saved_data["eps"] = eps;
    at::AutoDispatchBelowADInplaceOrView below;
    return forward_op().call(x, w, shift, scale, index, eps);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto s = ctx->get_saved_variables();
    // Outside create_graph, straight to the kernels (no autograd node for the
    // backward op: it would only cost host time).
    std::optional<at::AutoDispatchBelowADInplaceOrView> below;
    if (!at::GradMode::is_enabled()) below.emplace();
    const double eps = ctx->saved_data["eps"].toDouble();
    auto [dx, dw, dshift, dscale] = backward_op().call(grads[0], s[0], s[1], s[2], s[3], eps);
    return {dx, dw, dshift, dscale, at::Tensor(), at::Tensor()};  // none for index and eps
  }
};

at::Tensor forward_autograd(const at::Tensor& x, const at::Tensor& w, const at::Tensor& shift, const at::Tensor& scale,
                            const at::Tensor& index, double eps) {
  return RmsnormModulateFunction::apply(x, w, shift, scale, index, eps);
}

}  // namespace
}  // namespace gatecheck

TORCH_LIBRARY_FRAGMENT(gatecheck, m) {
  m.def("rmsnorm_modulate(Tensor x, Tensor w, Tensor shift, Tensor scale, Tensor index, float eps=1e-06) -> Tensor");
  m.def("rmsnorm_modulate_backward(Tensor grad_out, Tensor x, Tensor w, Tensor scale, Tensor index, float eps) -> "
        "(Tensor, Tensor, Tensor, Tensor)");
}
TORCH_LIBRARY_IMPL(gatecheck, CUDA, m) {
  m.impl("rmsnorm_modulate", &gatecheck::forward_cuda);
  m.impl("rmsnorm_modulate_backward", &gatecheck::backward_cuda);
}
TORCH_LIBRARY_IMPL(gatecheck, Meta, m) {
  m.impl("rmsnorm_modulate", &gatecheck::forward_meta);
  m.impl("rmsnorm_modulate_backward", &gatecheck::backward_meta);
}
TORCH_LIBRARY_IMPL(gatecheck, Autograd, m) {
  m.impl("rmsnorm_modulate", &gatecheck::forward_autograd);
  m.impl("rmsnorm_modulate_backward", &gatecheck::backward_autograd);
}
