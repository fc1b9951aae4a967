// Latency for `gatecheck sweep`: one implementation's forward and
// forward+backward on the full case held by a batch runner, timed three ways
// beside a copy of the same bytes timed the same way:
//   event_us  CUDA events around each call, queued as the host issues them,
//             median of `reps` after `warmup` (the prior art's method: the
//             seed report's fwd_us and fwd_bwd_us);
//   gpu_us    GPU time only, as `gatecheck bench` measures it (each batch of
//             runs queued behind a hold kernel): the implementation's own
//             entry points where bench/native_timing.h knows them (neither
//             with the plugin adapter's synchronisation); for any other
//             implementation its ABI call, unless that waits on the GPU
//             inside, when GPU time cannot be told from the host's (then -1,
//             and gpu_method says so);
//   wall_us   the host's clock per call until its results are ready (a
//             device synchronise), as a training step sees it.
// On the CPU, wall_us only. For an op whose prior art is an operator report,
// the backward alone is timed too (Latency::bwd).
#pragma once

#include "sweep.h"

namespace gatecheck {

Latency time_sweep_calls(BatchRunner& r, const SweepGrid& g);

}  // namespace gatecheck
