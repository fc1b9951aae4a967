// rmsnorm_modulate's row statistic alone, as the "cuda" kernels compute it,
// for the reproducible mode (rmsnorm_modulate_repro_cuda.cu), whose dweight
// and dscale terms need every row's rstd. Internal to kernels/cuda.
#pragma once

#include "../op_schema.h"

namespace gatecheck {

// rstd[r] for every row of c (a checked call, either pass; reads x and eps
// alone): rmsnorm_modulate_order.h's sum of squares, the row kernels' bits.
// rstd: rows floats on the device. Queued on c.p.stream, no sync.
Status rmsnorm_modulate_cuda_rstd(const OpCall& c, float* rstd);

}  // namespace gatecheck
