// gate_residual's reproducible grad_gate as LibTorch operators: the split
// exchange (gatecheck_split_exchange.h) that data-parallel ranks and
// gradient accumulation use, so that grad_gate is the same bits however the
// batch is cut. README.md beside this file has the contract.
//
//   torch.ops.gatecheck.gate_residual_grad_gate_state(grad_out, gate, index, y) -> state
//       int64 [gates, dim, 4]: the binned sums of one part's rows (binned_sum.h)
//   torch.ops.gatecheck.gate_residual_state_combine(states) -> state
//       the states (a list, any order gives the same words) combined
//   torch.ops.gatecheck.gate_residual_state_finalize(state, dtype) -> grad_gate
//       [gates, dim] of dtype, each element rounded once
//
// CPU kernels: host-repro's (gate_residual_repro_host.h). CUDA kernels:
// cuda-repro's (gate_residual_repro_cuda.h), the same words. Meta kernels
// for all three (the shapes follow from the arguments'). The states are
// integers: no autograd.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/core/DeviceGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <string>
#include <vector>

#include "../binned_sum.h"
#include "../cuda/gate_residual_cuda.h"
#include "../cuda/gate_residual_repro_cuda.h"
#include "../host/gate_residual_repro_host.h"
#include "binned_state_ops.h"
#include "torch_op_errors.h"

namespace gatecheck {
namespace {

constexpr const char* kStateOp = "gatecheck::gate_residual_grad_gate_state";
constexpr const char* kCombineOp = "gatecheck::gate_residual_state_combine";
constexpr const char* kFinalizeOp = "gatecheck::gate_residual_state_finalize";

// The state op's checks, the same on every dispatch key (CPU, CUDA, Meta),
// each before anything reads a size or a pointer: the ranks and dtypes
// first (so that a 1-D grad_out is named before its size(1) is read), then
// devices, then sizes. Sizes are compared as SymInts, so that the Meta
// kernel (FakeTensor, torch.compile) rejects what the real kernels reject
// rather than return a state of the wrong shape.
void check_state_args(const at::Tensor& grad_out, const at::Tensor& gate, const at::Tensor& index,
                      const at::Tensor& y) {
  TORCH_CHECK(grad_out.dim() == 2, kStateOp, ": grad_out must be 2-D [rows, dim], got ", grad_out.dim(), "-D");
  TORCH_CHECK(y.dim() == 2, kStateOp, ": y must be 2-D [rows, dim], got ", y.dim(), "-D");
  TORCH_CHECK(gate.dim() == 2, kStateOp, ": gate must be 2-D [gates, dim], got ", gate.dim(), "-D");
  TORCH_CHECK(index.dim() == 1, kStateOp, ": index must be 1-D, got ", index.dim(), "-D");
  torch_op::abi_dtype(kStateOp, grad_out);
  TORCH_CHECK(gate.scalar_type() == grad_out.scalar_type() && y.scalar_type() == grad_out.scalar_type(), kStateOp,
              ": grad_out, gate and y must share one dtype, got ", grad_out.scalar_type(), ", ", gate.scalar_type(),
              ", ", y.scalar_type());
  TORCH_CHECK(index.scalar_type() == at::kLong, kStateOp, ": index must be int64, got ", index.scalar_type());
  auto same_device = [&](const at::Tensor& t, const char* name) {
    TORCH_CHECK(t.device() == grad_out.device(), kStateOp, ": ", name, " is on ", t.device(), ", grad_out on ",
                grad_out.device());
  };
  same_device(gate, "gate");
  same_device(index, "index");
  same_device(y, "y");
  TORCH_CHECK(grad_out.sym_sizes() == y.sym_sizes(), kStateOp, ": grad_out ", grad_out.sym_sizes(), " and y ",
              y.sym_sizes(), " differ");
  TORCH_CHECK(gate.sym_size(1) == grad_out.sym_size(1), kStateOp, ": gate has ", gate.sym_size(1),
              " columns, grad_out has ", grad_out.sym_size(1));
  const c10::SymInt s = index.sym_size(0), rows = grad_out.sym_size(0);
  TORCH_CHECK(s == rows || (s > 0 && rows % s == 0), kStateOp, ": rows = ", rows,
              " is neither the index length nor a multiple of it (the shared-index form), S = ", s);
}

// The shared-index form expanded to one entry per row (a small int64 copy).
at::Tensor full_index(const at::Tensor& index, int64_t rows) {
  return index.size(0) == rows ? index.contiguous() : index.repeat({rows / index.size(0)}).contiguous();
}

gatecheck_problem problem(int64_t rows, int64_t dim, int64_t gates, int32_t dtype, const at::Device& device) {
  void* stream = device.is_cuda() ? c10::cuda::getCurrentCUDAStream(device.index()).stream() : nullptr;
  return gatecheck_problem{rows, dim, gates, dtype, device.is_cuda() ? GATECHECK_CUDA : GATECHECK_CPU, stream};
}

// A state: int64 [gates, dim, kBinnedWords] (binned_state_ops.h checks and combines it).
const torch_op::StateKind kState{kStateOp, "[gates, dim, 4]"};

// ---- CPU (host-repro) ----

at::Tensor state_cpu(const at::Tensor& grad_out_in, const at::Tensor& gate, const at::Tensor& index_in,
                     const at::Tensor& y_in) {
  check_state_args(grad_out_in, gate, index_in, y_in);
  const at::Tensor g = grad_out_in.contiguous(), y = y_in.contiguous();
  const gatecheck_problem p =
      problem(g.size(0), g.size(1), gate.size(0), torch_op::abi_dtype(kStateOp, g), g.device());
  const at::Tensor index = full_index(index_in, p.rows);
  at::Tensor state = at::empty({p.gates, p.dim, kBinnedWords}, g.options().dtype(at::kLong));
  const Status s = gate_residual_repro_partial(p, g.data_ptr(), index.data_ptr<int64_t>(), y.data_ptr(),
                                               reinterpret_cast<uint64_t*>(state.data_ptr<int64_t>()));
  TORCH_CHECK(s.ok(), kStateOp, ": ", s.message);
  return state;
}

at::Tensor combine_cpu(at::TensorList states) { return torch_op::combine_states_cpu(kCombineOp, kState, states); }

at::Tensor finalize_cpu(const at::Tensor& state_in, at::ScalarType dtype) {
  torch_op::check_state(kFinalizeOp, kState, "state", state_in);
  const at::Tensor state = state_in.contiguous();
  torch_op::check_top_bins(kFinalizeOp, "state", state);
  const gatecheck_problem p = problem(0, state.size(1), state.size(0), torch_op::finalize_dtype(kFinalizeOp, dtype), state.device());
  at::Tensor grad_gate = at::empty({p.gates, p.dim}, state.options().dtype(dtype));
  gate_residual_repro_finalize(p, reinterpret_cast<const uint64_t*>(state.data_ptr<int64_t>()), grad_gate.data_ptr());
  return grad_gate;
}

// ---- CUDA (cuda-repro): as the other ops, a bad index is raised at the next
// call on the stream, by check_errors(), or (GATECHECK_OP_CHECKED=1) by the call.

at::Tensor state_cuda(const at::Tensor& grad_out_in, const at::Tensor& gate, const at::Tensor& index_in,
                      const at::Tensor& y_in) {
  check_state_args(grad_out_in, gate, index_in, y_in);
  const c10::DeviceGuard guard(grad_out_in.device());
  const at::Tensor g = grad_out_in.contiguous(), y = y_in.contiguous();
  const gatecheck_problem p =
      problem(g.size(0), g.size(1), gate.size(0), torch_op::abi_dtype(kStateOp, g), g.device());
  torch_op::raise_pending(p.stream);
  const at::Tensor index = full_index(index_in, p.rows);
  at::Tensor state = at::empty({p.gates, p.dim, kBinnedWords}, g.options().dtype(at::kLong));
  torch_op::check(gate_residual_repro_partial_cuda(p, g.data_ptr(), index.data_ptr<int64_t>(), y.data_ptr(),
                                                   reinterpret_cast<uint64_t*>(state.data_ptr<int64_t>())),
                  p.stream);
  if (p.rows > 0 && (torch_op::checked_mode() || p.dim == 0))
    torch_op::raise_own(kStateOp, p, index.data_ptr<int64_t>());
  return state;
}

at::Tensor combine_cuda(at::TensorList states) { return torch_op::combine_states_cuda(kCombineOp, kState, states); }

at::Tensor finalize_cuda(const at::Tensor& state_in, at::ScalarType dtype) {
  torch_op::check_state(kFinalizeOp, kState, "state", state_in);
  const c10::DeviceGuard guard(state_in.device());
  const at::Tensor state = state_in.contiguous();
  const gatecheck_problem p = problem(0, state.size(1), state.size(0), torch_op::finalize_dtype(kFinalizeOp, dtype), state.device());
  at::Tensor grad_gate = at::empty({p.gates, p.dim}, state.options().dtype(dtype));
  torch_op::check(gate_residual_repro_finalize_cuda(p, reinterpret_cast<const uint64_t*>(state.data_ptr<int64_t>()),
                                                    grad_gate.data_ptr()),
                  p.stream);
  return grad_gate;
}

// ---- Meta: shapes only ----

at::Tensor state_meta(const at::Tensor& grad_out, const at::Tensor& gate, const at::Tensor& index,
                      const at::Tensor& y) {
  check_state_args(grad_out, gate, index, y);
  return at::empty_symint({gate.sym_size(0), grad_out.sym_size(1), c10::SymInt(kBinnedWords)},
                          grad_out.options().dtype(at::kLong));
}
at::Tensor combine_meta(at::TensorList states) { return torch_op::combine_states_meta(kCombineOp, kState, states); }
at::Tensor finalize_meta(const at::Tensor& state, at::ScalarType dtype) {
  torch_op::check_state(kFinalizeOp, kState, "state", state);
  torch_op::finalize_dtype(kFinalizeOp, dtype);
  return at::empty_symint({state.sym_size(0), state.sym_size(1)}, state.options().dtype(dtype));
}

// No tensor to dispatch on (an empty list) or a device without kernels: the error.
at::Tensor combine_other(at::TensorList states) { return torch_op::combine_states_other(kCombineOp, kState, states); }

}  // namespace
}  // namespace gatecheck

TORCH_LIBRARY_FRAGMENT(gatecheck, m) {
  m.def("gate_residual_grad_gate_state(Tensor grad_out, Tensor gate, Tensor index, Tensor y) -> Tensor");
  m.def("gate_residual_state_combine(Tensor[] states) -> Tensor");
  m.def("gate_residual_state_finalize(Tensor state, ScalarType dtype) -> Tensor");
}
TORCH_LIBRARY_IMPL(gatecheck, CPU, m) {
  m.impl("gate_residual_grad_gate_state", &gatecheck::state_cpu);
  m.impl("gate_residual_state_combine", &gatecheck::combine_cpu);
  m.impl("gate_residual_state_finalize", &gatecheck::finalize_cpu);
}
TORCH_LIBRARY_IMPL(gatecheck, CUDA, m) {
  m.impl("gate_residual_grad_gate_state", &gatecheck::state_cuda);
  m.impl("gate_residual_state_combine", &gatecheck::combine_cuda);
  m.impl("gate_residual_state_finalize", &gatecheck::finalize_cuda);
}
TORCH_LIBRARY_IMPL(gatecheck, Meta, m) {
  m.impl("gate_residual_grad_gate_state", &gatecheck::state_meta);
  m.impl("gate_residual_state_combine", &gatecheck::combine_meta);
  m.impl("gate_residual_state_finalize", &gatecheck::finalize_meta);
}
TORCH_LIBRARY_IMPL(gatecheck, CompositeExplicitAutograd, m) {
  m.impl("gate_residual_state_combine", &gatecheck::combine_other);
}
// Integer states: nothing to differentiate (and the Meta kernels serve
// tensors that require grad, e.g. under FakeTensor).
TORCH_LIBRARY_IMPL(gatecheck, Autograd, m) {
  m.impl("gate_residual_grad_gate_state", torch::CppFunction::makeFallthrough());
  m.impl("gate_residual_state_combine", torch::CppFunction::makeFallthrough());
  m.impl("gate_residual_state_finalize", torch::CppFunction::makeFallthrough());
}
