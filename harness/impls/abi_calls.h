// A call of an op through one of the plugin C ABIs: v2 for any op (one
// descriptor per tensor, named by the op), v1 for gate_residual (the
// positional arguments it was written with). A non-zero return becomes a
// Status: for our own implementations (ours = true) its ErrorKind, for a
// plugin's (whose codes mean nothing to us) kind `implementation` with the
// code and last_error()'s message.
#pragma once

#include <vector>

#include "../../kernels/gatecheck_plugin_v2.h"
#include "../../kernels/gatecheck_split_exchange.h"
#include "../../kernels/op_schema.h"

namespace gatecheck {

Status call_abi_v2(const gatecheck_op_plugin& api, const OpCall& c, bool ours);
// The split exchange's three calls (gatecheck_split_exchange.h).
Status exchange_partial_v2(const gatecheck_split_exchange& ex, const OpCall& bwd, uint64_t* state, bool ours);
Status exchange_combine_v2(const gatecheck_split_exchange& ex, const gatecheck_problem& p,
                           const std::vector<const uint64_t*>& states, uint64_t* out, bool ours);
Status exchange_finalize_v2(const gatecheck_split_exchange& ex, const OpCall& bwd, const uint64_t* state, bool ours);
// c must be a call of gate_residual (the only op of ABI v1).
Status call_abi_v1(const gatecheck_plugin& api, const OpCall& c, bool ours);

}  // namespace gatecheck
