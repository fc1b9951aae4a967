// The LibTorch eager implementation of gate_residual ("torch-eager"):
//   out = res + gate.index_select(0, idx) * y, gradients by autograd.
// It is the baseline the prior art measured (diffusers' formulation). This
// header does not include torch: only torch_eager.cpp does, so LibTorch's
// compile cost stays in one translation unit. A process reaches these
// functions through torch_eager_loader.cpp, which loads the LibTorch module
// (libgatecheck_torch_eager.so) at the first call, and throws when it cannot.
#pragma once

#include <string>

#include "../gate_residual.h"

namespace gatecheck {

// The implementation behind the plugin C ABI for device d, or nullptr when
// this LibTorch cannot run on d (a CPU-only LibTorch asked for cuda, or no
// GPU). Forward and backward validate their arguments like every other
// implementation (check_fwd_args / check_bwd_args), and every LibTorch
// exception comes back as a non-zero return with last_error() set; nothing
// is thrown across the ABI.
//
// On cuda the call runs on LibTorch's current stream and synchronises the
// device before and after, so it is correct for any problem.stream (it is not
// asynchronous: this build must compile against a CPU-only LibTorch, which has
// no c10::cuda stream API).
const gatecheck_plugin* torch_eager_plugin(Device d);

// Sets LibTorch's intra-op thread count (at::set_num_threads; n <= 0: the
// count LibTorch started with): process-wide; every thread that runs an op
// afterwards uses it. Before LibTorch is loaded it is kept for the load, and
// loads nothing.
void torch_eager_set_intra_op_threads(int n);

// The LibTorch this was built against, e.g. "1.13.0". Its numerics differ
// between versions (tests/impls: grad_gate accumulation on the CPU).
std::string libtorch_version();

}  // namespace gatecheck
