// The LibTorch eager implementation of rmsnorm_modulate ("torch-eager"),
// composed as diffusers writes it: RMSNorm with fp32 statistics, then
// n * (1 + scale[index]) + shift[index] as separate tensor ops; the backward
// by autograd. This header does not include torch: only its .cpp does.
#pragma once

#include "../gatecheck_plugin_v2.h"
#include "../op_schema.h"

namespace gatecheck {

// The implementation behind the plugin ABI v2 for device d, or nullptr when
// this LibTorch cannot run on d. Calls validate their arguments as the
// contract says (check_call; on cuda the index is checked on a host copy),
// and every LibTorch exception comes back as a non-zero return with
// last_error() set. On cuda a call synchronises the device before and after.
const gatecheck_op_plugin* rmsnorm_modulate_torch_eager_plugin(Device d);

}  // namespace gatecheck
