// What the LibTorch ops over binned states share (binned_sum.h: an element's
// reproducible sum in kBinnedWords int64 words): the checks of a state, the
// combine on CPU and CUDA, and the dtype a finalize rounds to. A state is
// int64 [rows, dim, kBinnedWords]; every element combines on its own, so one
// combine serves every op's state. `op` names the calling op in each message,
// `kind` the states it takes.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

namespace gatecheck {
namespace torch_op {

struct StateKind {
  const char* made_by;  // the op that makes such states
  const char* shape;    // their shape in words, "[gates, dim, 4]"
};

// s is an int64 [rows, dim, kBinnedWords] state (`what` names the argument).
void check_state(const char* op, const StateKind& kind, const std::string& what, const at::Tensor& s);
// A non-empty list of states of one shape on one device.
void check_states(const char* op, const StateKind& kind, at::TensorList states);
// A CPU state's top bins are those of finite fp32 terms (a state summed
// without the all-reduce's MAX and align steps often is not).
void check_top_bins(const char* op, const std::string& what, const at::Tensor& contiguous_state);
// The kernels' dtype code of a finalize's dtype: bf16, fp16 or fp32.
int32_t finalize_dtype(const char* op, at::ScalarType dtype);

// The states combined (any order gives the same words), on their device.
at::Tensor combine_states_cpu(const char* op, const StateKind& kind, at::TensorList states);
at::Tensor combine_states_cuda(const char* op, const StateKind& kind, at::TensorList states);
at::Tensor combine_states_meta(const char* op, const StateKind& kind, at::TensorList states);
// An empty list or a device without kernels: the error.
at::Tensor combine_states_other(const char* op, const StateKind& kind, at::TensorList states);

}  // namespace torch_op
}  // namespace gatecheck
