// The host build of gate_residual (implementation name "host"): the same
// per-element math and the same grad_gate reduction order as the CUDA kernels,
// compiled for the CPU, so `cuda` and `host` agree bit for bit.
#pragma once

#include "../gate_residual.h"

namespace gatecheck {

Status gate_residual_fwd_host(const gatecheck_problem& p, const void* res, const void* gate,
                              const int64_t* index, const void* y, void* out);
Status gate_residual_bwd_host(const gatecheck_problem& p, const void* grad_out, const void* gate,
                              const int64_t* index, const void* y, void* grad_res,
                              void* grad_gate, void* grad_y);

// The same two functions behind the plugin C ABI, so the harness treats "host"
// like any other implementation.
const gatecheck_plugin* gate_residual_host_plugin();

}  // namespace gatecheck
