// The shared checks and combine of binned states (binned_state_ops.h).
#include "binned_state_ops.h"

#include <ATen/ops/empty.h>
#include <ATen/ops/stack.h>
#include <c10/core/DeviceGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <vector>

#include "../binned_sum.h"
#include "../cuda/gate_residual_repro_cuda.h"
#include "../host/gate_residual_repro_host.h"
#include "torch_op_errors.h"

namespace gatecheck {
namespace torch_op {

void check_state(const char* op, const StateKind& kind, const std::string& what, const at::Tensor& s) {
  TORCH_CHECK(s.scalar_type() == at::kLong, op, ": ", what, " must be an int64 state ", kind.shape, " (from ",
              kind.made_by, "), got dtype ", s.scalar_type());
  TORCH_CHECK(s.dim() == 3 && s.sym_size(2) == kBinnedWords, op, ": ", what, " must be a state ", kind.shape,
              " (from ", kind.made_by, "), got shape ", s.sym_sizes());
}

void check_states(const char* op, const StateKind& kind, at::TensorList states) {
  TORCH_CHECK(!states.empty(), op, ": states is empty (combine takes one state or more)");
  for (size_t i = 0; i < states.size(); ++i) {
    const std::string what = "states[" + std::to_string(i) + "]";
    check_state(op, kind, what, states[i]);
    TORCH_CHECK(states[i].sym_sizes() == states[0].sym_sizes(), op, ": ", what, " has shape ", states[i].sym_sizes(),
                ", states[0] ", states[0].sym_sizes(), " (every part's state has the batch's shape)");
    TORCH_CHECK(states[i].device() == states[0].device(), op, ": ", what, " is on ", states[i].device(),
                ", states[0] on ", states[0].device());
  }
}

// A finite fp32 term's top bin is at most kMaxTopBin, and bits 8-15 of the
// last word are zero. CUDA states are not read on the host: no sync.
constexpr uint64_t kMaxTopBin = (253 >> 5) + 1;  // the largest finite fp32 exponent's bin
void check_top_bins(const char* op, const std::string& what, const at::Tensor& contiguous_state) {
  const int64_t* w = contiguous_state.data_ptr<int64_t>();
  const int64_t elements = contiguous_state.numel() / kBinnedWords;
  for (int64_t e = 0; e < elements; ++e) {
    const uint64_t top = uint64_t(w[e * kBinnedWords + 3]) & 0xffffu;
    TORCH_CHECK(top <= kMaxTopBin, op, ": ", what, " is not a state: element ", e, " has top bin ", top, " (at most ",
                kMaxTopBin, "); an all-reduce must take the MAX of the top bins and align the states before its SUM");
  }
}

int32_t finalize_dtype(const char* op, at::ScalarType dtype) {
  switch (dtype) {
    case at::kFloat: return GATECHECK_F32;
    case at::kHalf: return GATECHECK_F16;
    case at::kBFloat16: return GATECHECK_BF16;
    default: TORCH_CHECK(false, op, ": dtype ", dtype, " is not bf16, fp16 or fp32");
  }
  return -1;
}

namespace {
// The combine reads the element count only: rows as the problem's gates, no dtype.
gatecheck_problem states_problem(const at::Tensor& like) {
  void* stream = like.is_cuda() ? c10::cuda::getCurrentCUDAStream(like.device().index()).stream() : nullptr;
  return gatecheck_problem{0, like.size(1), like.size(0), GATECHECK_F32, like.is_cuda() ? GATECHECK_CUDA : GATECHECK_CPU,
                           stream};
}
}  // namespace

at::Tensor combine_states_cpu(const char* op, const StateKind& kind, at::TensorList states_in) {
  check_states(op, kind, states_in);
  std::vector<at::Tensor> states;  // contiguous, alive for the call
  std::vector<const uint64_t*> ptrs;
  for (const at::Tensor& s : states_in) {
    states.push_back(s.contiguous());
    check_top_bins(op, "states[" + std::to_string(states.size() - 1) + "]", states.back());
    ptrs.push_back(reinterpret_cast<const uint64_t*>(states.back().data_ptr<int64_t>()));
  }
  at::Tensor out = at::empty(states[0].sizes(), states[0].options());
  gate_residual_repro_combine(states_problem(states[0]), ptrs.data(), int32_t(ptrs.size()),
                              reinterpret_cast<uint64_t*>(out.data_ptr<int64_t>()));
  return out;
}

at::Tensor combine_states_cuda(const char* op, const StateKind& kind, at::TensorList states_in) {
  check_states(op, kind, states_in);
  const c10::DeviceGuard guard(states_in[0].device());
  const at::Tensor states = at::stack(states_in).contiguous();  // n consecutive states, the kernel's input
  const gatecheck_problem p = states_problem(states_in[0]);
  at::Tensor out = at::empty(states_in[0].sizes(), states.options());
  check(gate_residual_repro_combine_cuda(p, reinterpret_cast<const uint64_t*>(states.data_ptr<int64_t>()),
                                         int32_t(states.size(0)), reinterpret_cast<uint64_t*>(out.data_ptr<int64_t>())),
        p.stream);
  return out;
}

at::Tensor combine_states_meta(const char* op, const StateKind& kind, at::TensorList states) {
  check_states(op, kind, states);
  return at::empty_symint(states[0].sym_sizes(), states[0].options());
}

at::Tensor combine_states_other(const char* op, const StateKind& kind, at::TensorList states) {
  check_states(op, kind, states);
  TORCH_CHECK(false, op, ": states are on ", states[0].device(), "; CPU and CUDA only");
  return {};
}

}  // namespace torch_op
}  // namespace gatecheck
