// rmsnorm_modulate's CUDA kernels (implementation "cuda"), behind the plugin
// ABI v2. The reduction orders are rmsnorm_modulate_order.h's, so the host
// twin computes the same bits. Every index is checked on the device before
// any output is written; the entry points synchronise the call's stream and
// report a bad index by row and value, having written nothing.
#pragma once

#include "../gatecheck_plugin_v2.h"
#include "../op_schema.h"

namespace gatecheck {

// The kernels on a checked call (check_call, index on the device). Work is
// queued on c.p.stream; *bad_row (a device word) is set to the first row
// whose index is out of range, or to ~0 when there is none. Nothing is
// written to an output when there is one. The scratch (the fp32 partials
// and the index plan) comes from the stream's memory pool and goes back to
// it before the call returns: no host sync.
Status rmsnorm_modulate_cuda_run(const OpCall& c, unsigned long long* bad_row);

// Bytes of scratch a backward of this problem takes at most.
int64_t rmsnorm_modulate_cuda_bwd_scratch_bytes(int64_t rows, int64_t dim, int64_t gates);

const gatecheck_op_plugin* rmsnorm_modulate_cuda_plugin();

}  // namespace gatecheck
