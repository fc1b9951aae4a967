// The CUDA kernels behind the plugin C ABI. Each entry point launches, then
// synchronises its stream so that an index found out of range on the device
// is reported by this call (the raw API leaves that to the caller).
#include <string>

#include "gate_residual_cuda.h"

namespace gatecheck {
namespace {

thread_local std::string g_last_error;

int to_abi(const Status& s) {
  if (s.ok()) return 0;
  g_last_error = s.message;
  return int(s.kind);
}

int abi_forward(const gatecheck_problem* p, const void* res, const void* gate, const int64_t* index,
                const void* y, void* out) {
  if (!p) return to_abi(Status::error(ErrorKind::null_pointer, "gate_residual_fwd: problem is null"));
  Status s = gate_residual_fwd_cuda(*p, res, gate, index, y, out);
  if (s.ok() && p->rows > 0) s = gate_residual_cuda_sync_status("gate_residual_fwd", *p, index);
  return to_abi(s);
}

int abi_backward(const gatecheck_problem* p, const void* grad_out, const void* gate,
                 const int64_t* index, const void* y, void* grad_res, void* grad_gate, void* grad_y) {
  if (!p) return to_abi(Status::error(ErrorKind::null_pointer, "gate_residual_bwd: problem is null"));
  Status s = gate_residual_bwd_cuda(*p, grad_out, gate, index, y, grad_res, grad_gate, grad_y);
  if (s.ok() && p->rows > 0) s = gate_residual_cuda_sync_status("gate_residual_bwd", *p, index);
  return to_abi(s);
}

const char* abi_last_error() { return g_last_error.c_str(); }

}  // namespace

const gatecheck_plugin* gate_residual_cuda_plugin() {
  static const gatecheck_plugin plugin = {GATECHECK_ABI_VERSION, "cuda", 1u << GATECHECK_CUDA,
                                          abi_forward, abi_backward, abi_last_error};
  return &plugin;
}

}  // namespace gatecheck
