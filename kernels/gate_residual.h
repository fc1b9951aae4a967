// The gate_residual op contract: shapes and the validation every
// implementation of it shares (the generic part is op_contract.h). One op
// name across every layer: gate_residual_fwd / gate_residual_bwd.
//
//   res, y, out, grad_out, grad_res, grad_y : [rows, dim]
//   gate, grad_gate                         : [gates, dim] (grad_gate has gate's dtype)
//   index                                   : int64 [rows], each in [0, gates)
//
// rows = 0 or dim = 0 is a valid empty problem; for rows = 0 grad_gate is all
// zeros. Bad input returns a Status naming the argument and the bad value, and
// nothing is written.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "op_contract.h"

namespace gatecheck {

// Full argument checks for the raw (dense, plugin-ABI shaped) entry points.
// Index contents are checked only when index_on_host is true.
Status check_fwd_args(const gatecheck_problem& p, const void* res, const void* gate,
                      const int64_t* index, const void* y, const void* out,
                      uint32_t supported_devices, bool index_on_host);
Status check_bwd_args(const gatecheck_problem& p, const void* grad_out, const void* gate,
                      const int64_t* index, const void* y, const void* grad_res,
                      const void* grad_gate, const void* grad_y, uint32_t supported_devices,
                      bool index_on_host);



}  // namespace gatecheck
