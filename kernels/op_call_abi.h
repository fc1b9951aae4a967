// A call of the plugin ABI v2 (gatecheck_plugin_v2.h) as an OpCall, for
// implementations written against op_schema.h: each descriptor taken by its
// place in the op's order, after checking that it is the tensor the op puts
// there (its name and dtype). What the call itself asks is check_call's.
#pragma once

#include "gatecheck_plugin_v2.h"
#include "op_schema.h"

namespace gatecheck {

// Fills *out from c for `pass` of op: the problem, each buffer (data and
// shape), the scalars. A mismatch (another op, a missing or misnamed
// descriptor, a wrong dtype) is a Status naming it; nothing else is checked.
Status op_call_from_abi(const OpSchema& op, Pass pass, const gatecheck_call* c, OpCall* out);

}  // namespace gatecheck
