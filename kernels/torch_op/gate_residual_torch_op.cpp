// gatecheck::gate_residual as a LibTorch operator with autograd, on the CUDA
// kernels: out = res + gate[index] * y.
//
//   torch.ops.gatecheck.gate_residual(res, gate, index, y) -> out
//
// - res, y: [rows, dim] CUDA tensors of one dtype (bf16, fp16, fp32);
// - gate: [gates, dim], any row stride with unit column stride (a column block
//   of a wider table, as in H3's (9, 6*dim) modulation table, is used in place);
// - index: int64, either [rows] or the shared-index form [S] with rows % S == 0,
//   where row r uses index[r % S].
// The backward gives grad_res, grad_gate (dense, gate's shape) and grad_y from
// the same kernels; index gets no gradient. An out-of-range index raises an
// error naming the row and value (this synchronises the stream after each call;
// the raw API in gate_residual_cuda.h leaves that to its caller).
#include <ATen/cuda/CUDAContext.h>
#include <torch/library.h>
#include <torch/torch.h>

#include "../cuda/gate_residual_cuda.h"

namespace gatecheck {
namespace {

int32_t abi_dtype(const at::Tensor& t) {
  switch (t.scalar_type()) {
    case at::kFloat: return GATECHECK_F32;
    case at::kHalf: return GATECHECK_F16;
    case at::kBFloat16: return GATECHECK_BF16;
    default: TORCH_CHECK(false, "gatecheck::gate_residual: dtype ", t.scalar_type(), " is not bf16, fp16 or fp32");
  }
  return -1;
}

void check(const Status& s) { TORCH_CHECK(s.ok(), s.message); }

// Expands the shared-index form to one entry per row (a small int64 copy).
at::Tensor full_index(const at::Tensor& index, int64_t rows) {
  TORCH_CHECK(index.scalar_type() == at::kLong, "gatecheck::gate_residual: index must be int64, got ",
              index.scalar_type());
  TORCH_CHECK(index.dim() == 1, "gatecheck::gate_residual: index must be 1-D, got ", index.dim(), "-D");
  const int64_t s = index.size(0);
  if (s == rows) return index.contiguous();
  TORCH_CHECK(s > 0 && rows % s == 0, "gatecheck::gate_residual: rows = ", rows,
              " is not a multiple of the shared index length S = ", s);
  return index.repeat({rows / s}).contiguous();
}

// gate as the kernels take it: unit column stride, any row stride.
at::Tensor gate_view(const at::Tensor& gate) {
  TORCH_CHECK(gate.dim() == 2, "gatecheck::gate_residual: gate must be 2-D [gates, dim]");
  if (gate.size(1) <= 1 || gate.stride(1) == 1) {
    if (gate.size(0) <= 1 || gate.stride(0) >= gate.size(1)) return gate;
  }
  return gate.contiguous();
}

gatecheck_problem problem(const at::Tensor& x, const at::Tensor& gate) {
  TORCH_CHECK(x.is_cuda(), "gatecheck::gate_residual: tensors must be on CUDA");
  TORCH_CHECK(x.dim() == 2, "gatecheck::gate_residual: res, y must be 2-D [rows, dim]");
  return gatecheck_problem{x.size(0), x.size(1), gate.size(0), abi_dtype(x), GATECHECK_CUDA,
                           at::cuda::getCurrentCUDAStream(x.device().index()).stream()};
}

int64_t row_stride(const at::Tensor& gate) { return gate.size(0) <= 1 ? gate.size(1) : gate.stride(0); }

at::Tensor forward_impl(const at::Tensor& res_in, const at::Tensor& gate_in, const at::Tensor& index_in,
                        const at::Tensor& y_in) {
  const at::Tensor res = res_in.contiguous(), y = y_in.contiguous(), gate = gate_view(gate_in);
  TORCH_CHECK(res.sizes() == y.sizes(), "gatecheck::gate_residual: res ", res.sizes(), " and y ", y.sizes(),
              " differ");
  TORCH_CHECK(gate.scalar_type() == res.scalar_type() && y.scalar_type() == res.scalar_type(),
              "gatecheck::gate_residual: res, gate and y must share one dtype");
  const gatecheck_problem p = problem(res, gate);
  const at::Tensor index = full_index(index_in, p.rows);
  at::Tensor out = at::empty_like(res);
  check(gate_residual_fwd_cuda_strided(p, res.data_ptr(), gate.data_ptr(), row_stride(gate),
                                       index.data_ptr<int64_t>(), y.data_ptr(), out.data_ptr()));
  check(gate_residual_cuda_sync_status("gatecheck::gate_residual (forward)", p, index.data_ptr<int64_t>()));
  return out;
}

class GateResidualFunction : public torch::autograd::Function<GateResidualFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& res, const at::Tensor& gate,
                            const at::Tensor& index, const at::Tensor& y) {
    ctx->save_for_backward({gate, index, y});
    return forward_impl(res, gate, index, y);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor gate = gate_view(saved[0]), y = saved[2].contiguous(), g = grads[0].contiguous();
    const gatecheck_problem p = problem(y, gate);
    const at::Tensor index = full_index(saved[1], p.rows);
    at::Tensor grad_res = at::empty_like(g), grad_y = at::empty_like(g);
    at::Tensor grad_gate = at::empty({gate.size(0), gate.size(1)}, g.options());
    check(gate_residual_bwd_cuda_strided(p, g.data_ptr(), gate.data_ptr(), row_stride(gate),
                                         index.data_ptr<int64_t>(), y.data_ptr(), grad_res.data_ptr(),
                                         grad_gate.data_ptr(), grad_y.data_ptr()));
    check(gate_residual_cuda_sync_status("gatecheck::gate_residual (backward)", p, index.data_ptr<int64_t>()));
    return {grad_res, grad_gate, at::Tensor(), grad_y};
  }
};

at::Tensor gate_residual_autograd(const at::Tensor& res, const at::Tensor& gate, const at::Tensor& index,
                                  const at::Tensor& y) {
  return GateResidualFunction::apply(res, gate, index, y);
}

}  // namespace
}  // namespace gatecheck

TORCH_LIBRARY(gatecheck, m) {
  m.def("gate_residual(Tensor res, Tensor gate, Tensor index, Tensor y) -> Tensor");
}
TORCH_LIBRARY_IMPL(gatecheck, Autograd, m) { m.impl("gate_residual", &gatecheck::gate_residual_autograd); }
TORCH_LIBRARY_IMPL(gatecheck, CUDA, m) { m.impl("gate_residual", &gatecheck::forward_impl); }
