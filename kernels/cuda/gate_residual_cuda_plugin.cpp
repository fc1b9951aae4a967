// The CUDA kernels behind the plugin C ABI. Each entry point launches, then
// synchronises its stream so that an index found out of range on the device
// is reported by this call (the raw API leaves that to the caller).
#include <string>

#include "../plugin_adapter.h"
#include "gate_residual_cuda.h"

namespace gatecheck {
namespace {

using Abi = PluginAdapter<struct CudaTag>;

int abi_forward(const gatecheck_problem* p, const void* res, const void* gate, const int64_t* index,
                const void* y, void* out) {
  if (!p) return Abi::null_problem("gate_residual_fwd");
  Status s = gate_residual_fwd_cuda(*p, res, gate, index, y, out);
  if (s.ok() && p->rows > 0) s = gate_residual_cuda_sync_status("gate_residual_fwd", *p, index);
  return Abi::report(s);
}

int abi_backward(const gatecheck_problem* p, const void* grad_out, const void* gate,
                 const int64_t* index, const void* y, void* grad_res, void* grad_gate, void* grad_y) {
  if (!p) return Abi::null_problem("gate_residual_bwd");
  Status s = gate_residual_bwd_cuda(*p, grad_out, gate, index, y, grad_res, grad_gate, grad_y);
  if (s.ok() && p->rows > 0) s = gate_residual_cuda_sync_status("gate_residual_bwd", *p, index);
  return Abi::report(s);
}

}  // namespace

const gatecheck_plugin* gate_residual_cuda_plugin() {
  static const gatecheck_plugin plugin = {GATECHECK_ABI_VERSION, "cuda", 1u << GATECHECK_CUDA,
                                          abi_forward, abi_backward, Abi::last_error};
  return &plugin;
}

}  // namespace gatecheck
