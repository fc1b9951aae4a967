// rmsnorm_modulate's row statistic, alone or with dx, as the "cuda" kernels
// compute them, for the reproducible mode (rmsnorm_modulate_repro_cuda.cu),
// whose dweight and dscale terms need every row's rstd and whose backward
// needs dx and none of the cuda kernels' fp32 column sums. Internal to
// kernels/cuda.
#pragma once

#include "../op_schema.h"

namespace gatecheck {

// rstd[r] for every row of c (a checked call, either pass; reads x and eps
// alone): rmsnorm_modulate_order.h's sum of squares, the row kernels' bits.
// rstd: rows floats on the device. Queued on c.p.stream, no sync.
Status rmsnorm_modulate_cuda_rstd(const OpCall& c, float* rstd);

// The backward's row kernel alone: dx (c's output) and rstd[r] for every row
// of c (a checked backward call), the cuda backward's bits for both. Writes
// nothing when *bad (a device word, set by a kernel queued before) is not ~0.
// Queued on c.p.stream, no sync.
Status rmsnorm_modulate_cuda_dx(const OpCall& c, const unsigned long long* bad, float* rstd);

}  // namespace gatecheck
