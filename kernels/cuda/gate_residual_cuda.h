// The CUDA kernels of gate_residual (implementation name "cuda"): public API.
// Pointers are device pointers; work is queued on p.stream (a cudaStream_t).
#pragma once

#include "../gate_residual.h"

namespace gatecheck {

Status gate_residual_fwd_cuda(const gatecheck_problem& p, const void* res, const void* gate,
                              const int64_t* index, const void* y, void* out);
Status gate_residual_bwd_cuda(const gatecheck_problem& p, const void* grad_out, const void* gate,
                              const int64_t* index, const void* y, void* grad_res,
                              void* grad_gate, void* grad_y);

// The same behind the plugin C ABI (devices = cuda).
const gatecheck_plugin* gate_residual_cuda_plugin();

}  // namespace gatecheck
