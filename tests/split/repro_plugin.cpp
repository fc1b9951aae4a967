// host-repro as a plugin: gate_residual through ABI v1, its split exchange
// through ABI v2's gatecheck_split_exchange_v2. With SPLIT_EXCHANGE_LOSSY
// its combine drops the last state (a declared exchange the property must
// reject).
#include <cstring>

#include "kernels/host/gate_residual_repro_host.h"

namespace {
const gatecheck_split_exchange* real() { return gatecheck::gate_residual_repro_host_exchange(); }
int lossy_combine(const gatecheck_problem* p, const uint64_t* const* s, int32_t n, uint64_t* out) {
  return real()->combine(p, s, n > 1 ? n - 1 : n, out);
}
}  // namespace

extern "C" const gatecheck_plugin* gatecheck_plugin_v1() { return gatecheck::gate_residual_repro_host_plugin(); }

extern "C" const gatecheck_split_exchange* gatecheck_split_exchange_v2(const char* op) {
  if (!op || std::strcmp(op, "gate_residual") != 0) return nullptr;
#ifdef SPLIT_EXCHANGE_LOSSY
  static gatecheck_split_exchange lossy = [] {
    gatecheck_split_exchange e = *real();
    e.combine = lossy_combine;
    return e;
  }();
  return &lossy;
#else
  (void)lossy_combine;
  return real();
#endif
}
