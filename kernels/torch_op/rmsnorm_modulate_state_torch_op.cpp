// rmsnorm_modulate's reproducible parameter gradients as LibTorch operators:
// the split exchange (gatecheck_split_exchange.h) of host-repro, so that
// dweight, dshift and dscale are the same bits however data-parallel ranks or
// micro-batches cut the batch. README.md beside this file has the contract.
//
//   torch.ops.gatecheck.rmsnorm_modulate_param_grad_state(grad_out, x, w, scale, index, eps) -> state
//       int64 [1 + 2 x gates, dim, 4]: the binned sums (binned_sum.h) of one
//       part's rows, dweight's in row 0, dshift's in rows 1 to gates, dscale's after
//   torch.ops.gatecheck.rmsnorm_modulate_state_combine(states) -> state
//       the states (a list, any order gives the same words) combined
//   torch.ops.gatecheck.rmsnorm_modulate_state_finalize(state, dtype) -> (dweight, dshift, dscale)
//       each element rounded once to dtype
//
// CPU kernels: host-repro's (rmsnorm_modulate_repro_host.h), whose terms are
// the host twin's, so the finalized gradients are host-repro's backward's.
// CUDA kernels: cuda-repro's (rmsnorm_modulate_repro_cuda.h), the same words;
// as the other ops there, no host sync: a bad index is raised by the next
// call on the stream, by check_errors(), or (GATECHECK_OP_CHECKED=1) by the
// call. Meta kernels for all three. Integer states: no autograd.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <c10/core/DeviceGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <tuple>

#include "../binned_sum.h"
#include "../cuda/rmsnorm_modulate_cuda.h"
#include "../cuda/rmsnorm_modulate_repro_cuda.h"
#include "../host/rmsnorm_modulate_repro_host.h"
#include "../rmsnorm_modulate.h"
#include "binned_state_ops.h"
#include "torch_op_errors.h"

namespace gatecheck {
namespace {

constexpr const char* kStateOp = "gatecheck::rmsnorm_modulate_param_grad_state";
constexpr const char* kCombineOp = "gatecheck::rmsnorm_modulate_state_combine";
constexpr const char* kFinalizeOp = "gatecheck::rmsnorm_modulate_state_finalize";
const torch_op::StateKind kState{kStateOp, "[1 + 2 x gates, dim, 4]"};

// The state op's checks that need no sizes (Meta and CPU).
void check_kinds(const at::Tensor& g, const at::Tensor& x, const at::Tensor& w, const at::Tensor& scale,
                 const at::Tensor& index) {
  TORCH_CHECK(g.dim() == 2, kStateOp, ": grad_out must be 2-D [rows, dim], got ", g.dim(), "-D");
  TORCH_CHECK(x.dim() == 2, kStateOp, ": x must be 2-D [rows, dim], got ", x.dim(), "-D");
  TORCH_CHECK(w.dim() == 1, kStateOp, ": w must be 1-D [dim], got ", w.dim(), "-D");
  TORCH_CHECK(scale.dim() == 2, kStateOp, ": scale must be 2-D [gates, dim], got ", scale.dim(), "-D");
  torch_op::abi_dtype(kStateOp, x);
  for (const auto& [t, name] : {std::pair<const at::Tensor&, const char*>{g, "grad_out"}, {w, "w"}, {scale, "scale"}})
    TORCH_CHECK(t.scalar_type() == x.scalar_type(), kStateOp, ": ", name, " has dtype ", t.scalar_type(),
                ", x has ", x.scalar_type());
  TORCH_CHECK(index.scalar_type() == at::kLong, kStateOp, ": index must be int64, got ", index.scalar_type());
  TORCH_CHECK(index.dim() == 1, kStateOp, ": index must be 1-D [rows], got ", index.dim(), "-D");
}

TensorBuf buf(const at::Tensor& t) {
  if (t.dim() == 1) return {t.data_ptr(), t.scalar_type() == at::kLong ? t.size(0) : 1,
                            t.scalar_type() == at::kLong ? 1 : t.size(0)};
  return {t.data_ptr(), t.size(0), t.size(1)};
}

// The gates of a state [1 + 2 x gates, dim, 4].
int64_t state_gates(const char* op, int64_t state_rows) {
  TORCH_CHECK(state_rows % 2 == 1, op, ": state must be a state ", kState.shape, " (from ", kStateOp,
              "): its first dimension ", state_rows, " is not odd");
  return (state_rows - 1) / 2;
}

// The state op's arguments, checked, contiguous, as a backward call (its
// outputs unset), holding the contiguous tensors it points into.
struct StateCall {
  at::Tensor g, x, w, scale, index;
  OpCall c;
};
StateCall state_call(const at::Tensor& g_in, const at::Tensor& x_in, const at::Tensor& w_in,
                     const at::Tensor& scale_in, const at::Tensor& index_in, double eps) {
  check_kinds(g_in, x_in, w_in, scale_in, index_in);
  for (const auto& [t, name] : {std::pair<const at::Tensor&, const char*>{g_in, "grad_out"}, {w_in, "w"},
                                {scale_in, "scale"}, {index_in, "index"}})
    TORCH_CHECK(t.device() == x_in.device(), kStateOp, ": ", name, " is on ", t.device(), ", x on ", x_in.device());
  TORCH_CHECK(g_in.sizes() == x_in.sizes(), kStateOp, ": grad_out ", g_in.sizes(), " and x ", x_in.sizes(), " differ");
  StateCall sc{g_in.contiguous(), x_in.contiguous(), w_in.contiguous(), scale_in.contiguous(), index_in.contiguous(),
               {}};
  const bool cuda = sc.x.is_cuda();
  void* stream = cuda ? c10::cuda::getCurrentCUDAStream(sc.x.device().index()).stream() : nullptr;
  const gatecheck_problem p{sc.x.size(0), sc.x.size(1), sc.scale.size(0), torch_op::abi_dtype(kStateOp, sc.x),
                            cuda ? GATECHECK_CUDA : GATECHECK_CPU, stream};
  const OpSchema& op = rmsnorm_modulate_schema();
  sc.c = OpCall::shaped(op, Pass::backward, p);
  for (const auto& [name, t] : {std::pair<const char*, const at::Tensor*>{"x", &sc.x}, {"w", &sc.w},
                                {"scale", &sc.scale}, {"index", &sc.index}, {"grad_out", &sc.g}})
    sc.c.input(name) = buf(*t);
  sc.c.scalars[size_t(op.scalar_index("eps"))] = eps;
  return sc;
}

at::Tensor empty_state(const StateCall& sc) {
  const gatecheck_problem& p = sc.c.p;
  at::Tensor state = at::zeros({1 + 2 * p.gates, p.dim, kBinnedWords}, sc.x.options().dtype(at::kLong));
  TORCH_CHECK(state.numel() == rmsnorm_modulate_repro_state_words(p) || p.dim == 0, kStateOp,
              ": the state's words disagree with host-repro's");
  return state;
}

// ---- CPU (host-repro) ----

at::Tensor state_cpu(const at::Tensor& g_in, const at::Tensor& x_in, const at::Tensor& w_in,
                     const at::Tensor& scale_in, const at::Tensor& index_in, double eps) {
  const StateCall sc = state_call(g_in, x_in, w_in, scale_in, index_in, eps);
  at::Tensor state = empty_state(sc);
  const Status s = rmsnorm_modulate_repro_partial(sc.c, reinterpret_cast<uint64_t*>(state.data_ptr<int64_t>()));
  TORCH_CHECK(s.ok(), kStateOp, ": ", s.message);
  return state;
}

at::Tensor combine_cpu(at::TensorList states) { return torch_op::combine_states_cpu(kCombineOp, kState, states); }

// The finalize's outputs and its call over them, for a contiguous state on its device.
struct FinalizeCall {
  at::Tensor dw, dshift, dscale;
  OpCall c;
};
FinalizeCall finalize_call(const at::Tensor& state, at::ScalarType dtype) {
  const int64_t gates = state_gates(kFinalizeOp, state.size(0)), dim = state.size(1);
  const bool cuda = state.is_cuda();
  void* stream = cuda ? c10::cuda::getCurrentCUDAStream(state.device().index()).stream() : nullptr;
  const gatecheck_problem p{0, dim, gates, torch_op::finalize_dtype(kFinalizeOp, dtype),
                            cuda ? GATECHECK_CUDA : GATECHECK_CPU, stream};
  const at::TensorOptions o = state.options().dtype(dtype);
  FinalizeCall f{at::empty({dim}, o), at::empty({gates, dim}, o), at::empty({gates, dim}, o), {}};
  const OpSchema& op = rmsnorm_modulate_schema();
  f.c = OpCall::shaped(op, Pass::backward, p);
  for (const auto& [name, t] : {std::pair<const char*, const at::Tensor*>{"dweight", &f.dw}, {"dshift", &f.dshift},
                                {"dscale", &f.dscale}})
    f.c.output(name) = buf(*t);
  return f;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> finalize_cpu(const at::Tensor& state_in, at::ScalarType dtype) {
  torch_op::check_state(kFinalizeOp, kState, "state", state_in);
  const at::Tensor state = state_in.contiguous();
  torch_op::check_top_bins(kFinalizeOp, "state", state);
  const FinalizeCall f = finalize_call(state, dtype);
  if (f.c.p.dim > 0)
    rmsnorm_modulate_repro_finalize(f.c, reinterpret_cast<const uint64_t*>(state.data_ptr<int64_t>()));
  return {f.dw, f.dshift, f.dscale};
}

// ---- CUDA (cuda-repro) ----

at::Tensor state_cuda(const at::Tensor& g_in, const at::Tensor& x_in, const at::Tensor& w_in,
                      const at::Tensor& scale_in, const at::Tensor& index_in, double eps) {
  const c10::DeviceGuard guard(x_in.device());
  StateCall sc = state_call(g_in, x_in, w_in, scale_in, index_in, eps);
  const gatecheck_problem& p = sc.c.p;
  torch_op::raise_pending(p.stream);
  {  // the contract's checks but the index's (on the device): outputs stand in, never written
    OpCall k = sc.c;
    static char unused;
    for (auto& o : k.outputs) o.data = &unused;
    const Status s = check_call(k, 1u << GATECHECK_CUDA, /*index_on_host=*/false);
    TORCH_CHECK(s.ok(), kStateOp, ": partial: ", s.message);  // as the CPU op words it
  }
  at::Tensor state = empty_state(sc);
  constexpr int64_t kBadWord = 256;  // the bad-row word, then the partial's scratch (256-byte aligned)
  const at::Tensor scratch =
      at::empty({kBadWord + rmsnorm_modulate_repro_cuda_scratch_bytes(p)}, sc.x.options().dtype(at::kByte));
  auto* bad = reinterpret_cast<unsigned long long*>(scratch.data_ptr<uint8_t>());
  torch_op::check(rmsnorm_modulate_repro_partial_cuda(sc.c, reinterpret_cast<uint64_t*>(state.data_ptr<int64_t>()),
                                                      bad, scratch.data_ptr<uint8_t>() + kBadWord),
                  p.stream);
  torch_op::check(rmsnorm_modulate_cuda_defer_bad_row(sc.c, bad, kStateOp), p.stream);
  if (p.rows > 0 && torch_op::checked_mode()) torch_op::raise_own(kStateOp, p, sc.c.index());
  return state;
}

at::Tensor combine_cuda(at::TensorList states) { return torch_op::combine_states_cuda(kCombineOp, kState, states); }

std::tuple<at::Tensor, at::Tensor, at::Tensor> finalize_cuda(const at::Tensor& state_in, at::ScalarType dtype) {
  torch_op::check_state(kFinalizeOp, kState, "state", state_in);
  const c10::DeviceGuard guard(state_in.device());
  const at::Tensor state = state_in.contiguous();
  const FinalizeCall f = finalize_call(state, dtype);
  if (f.c.p.dim > 0)
    torch_op::check(
        rmsnorm_modulate_repro_finalize_cuda(f.c, reinterpret_cast<const uint64_t*>(state.data_ptr<int64_t>())),
        f.c.p.stream);
  return {f.dw, f.dshift, f.dscale};
}

// ---- Meta: shapes only ----

at::Tensor state_meta(const at::Tensor& g, const at::Tensor& x, const at::Tensor& w, const at::Tensor& scale,
                      const at::Tensor& index, double) {
  check_kinds(g, x, w, scale, index);
  return at::empty_symint({scale.sym_size(0) * 2 + c10::SymInt(1), x.sym_size(1), c10::SymInt(kBinnedWords)},
                          x.options().dtype(at::kLong));
}
at::Tensor combine_meta(at::TensorList states) { return torch_op::combine_states_meta(kCombineOp, kState, states); }
std::tuple<at::Tensor, at::Tensor, at::Tensor> finalize_meta(const at::Tensor& state, at::ScalarType dtype) {
  torch_op::check_state(kFinalizeOp, kState, "state", state);
  torch_op::finalize_dtype(kFinalizeOp, dtype);
  const c10::SymInt gates = (state.sym_size(0) - c10::SymInt(1)) / c10::SymInt(2);
  const at::TensorOptions o = state.options().dtype(dtype);
  return {at::empty_symint({state.sym_size(1)}, o), at::empty_symint({gates, state.sym_size(1)}, o),
          at::empty_symint({gates, state.sym_size(1)}, o)};
}

at::Tensor combine_other(at::TensorList states) { return torch_op::combine_states_other(kCombineOp, kState, states); }

}  // namespace
}  // namespace gatecheck

TORCH_LIBRARY_FRAGMENT(gatecheck, m) {
  m.def("rmsnorm_modulate_param_grad_state(Tensor grad_out, Tensor x, Tensor w, Tensor scale, Tensor index, "
        "float eps) -> Tensor");
  m.def("rmsnorm_modulate_state_combine(Tensor[] states) -> Tensor");
  m.def("rmsnorm_modulate_state_finalize(Tensor state, ScalarType dtype) -> (Tensor, Tensor, Tensor)");
}
TORCH_LIBRARY_IMPL(gatecheck, CPU, m) {
  m.impl("rmsnorm_modulate_param_grad_state", &gatecheck::state_cpu);
  m.impl("rmsnorm_modulate_state_combine", &gatecheck::combine_cpu);
  m.impl("rmsnorm_modulate_state_finalize", &gatecheck::finalize_cpu);
}
TORCH_LIBRARY_IMPL(gatecheck, CUDA, m) {
  m.impl("rmsnorm_modulate_param_grad_state", &gatecheck::state_cuda);
  m.impl("rmsnorm_modulate_state_combine", &gatecheck::combine_cuda);
  m.impl("rmsnorm_modulate_state_finalize", &gatecheck::finalize_cuda);
}
TORCH_LIBRARY_IMPL(gatecheck, Meta, m) {
  m.impl("rmsnorm_modulate_param_grad_state", &gatecheck::state_meta);
  m.impl("rmsnorm_modulate_state_combine", &gatecheck::combine_meta);
  m.impl("rmsnorm_modulate_state_finalize", &gatecheck::finalize_meta);
}
TORCH_LIBRARY_IMPL(gatecheck, CompositeExplicitAutograd, m) {
  m.impl("rmsnorm_modulate_state_combine", &gatecheck::combine_other);
}
TORCH_LIBRARY_IMPL(gatecheck, Autograd, m) {
  m.impl("rmsnorm_modulate_param_grad_state", torch::CppFunction::makeFallthrough());
  m.impl("rmsnorm_modulate_state_combine", torch::CppFunction::makeFallthrough());
  m.impl("rmsnorm_modulate_state_finalize", torch::CppFunction::makeFallthrough());
}
