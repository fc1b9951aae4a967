// GPU time only of an implementation's own entry points, where the benchmark
// knows them: gate_residual's CUDA kernels, and LibTorch's eager ops for it
// (neither with the plugin adapter's synchronise), runs queued behind a hold
// kernel as `gatecheck bench` times them. The calls' buffers are taken by
// their place in the op's schema. `gatecheck sweep` uses it for its gpu_us;
// where it is not known the sweep times the ABI call instead.
#pragma once

#include <string>

#include "../kernels/op_schema.h"
#include "bench_warmup.h"

namespace gatecheck {
namespace bench {

struct NativeTiming {
  bool known = false;        // false: no entry points known for this implementation and op
  double fwd_us = -1, fwd_bwd_us = -1;
  std::string method;        // how they were had, or why not
};

NativeTiming time_native_gpu(const std::string& impl, const OpCall& fwd, const OpCall& bwd, const Warmup& warm,
                             int reps);

}  // namespace bench
}  // namespace gatecheck
