// Placeholder until the CUDA kernels land: reports that the kernels are missing.
#include "gate_residual_cuda.h"

namespace gatecheck {
namespace {
const char* last_error() { return "gate_residual cuda kernels are not built yet"; }
int fwd(const gatecheck_problem*, const void*, const void*, const int64_t*, const void*, void*) {
  return int(ErrorKind::implementation);
}
int bwd(const gatecheck_problem*, const void*, const void*, const int64_t*, const void*, void*,
        void*, void*) {
  return int(ErrorKind::implementation);
}
}  // namespace
const gatecheck_plugin* gate_residual_cuda_plugin() {
  static const gatecheck_plugin p = {GATECHECK_ABI_VERSION, "cuda", 1u << GATECHECK_CUDA, fwd, bwd,
                                     last_error};
  return &p;
}
}  // namespace gatecheck
