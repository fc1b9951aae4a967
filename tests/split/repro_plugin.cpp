// host-repro as a plugin: gate_residual through ABI v1, its split exchange
// through ABI v2's gatecheck_split_exchange_v2; rmsnorm_modulate's host-repro
// and exchange through ABI v2 (in the plain build only). With SPLIT_EXCHANGE_LOSSY
// its combine drops the last state (a declared exchange the property must
// reject). With SPLIT_EXCHANGE_ODD_TREE it drops the last of an odd count of
// three or more, as a pairwise tree that forgets the odd one out: two halves
// (the default split) never show it, so only split plans of three or more
// parts find it (the fuzzer's planted split bug). With SPLIT_EXCHANGE_SLOW_PARTS
// each partial first sleeps 20 ms, a part's fixed cost as a GPU exchange has
// it (a call, its syncs, its state brought to the host): the scale tier's cost
// model must still run scale cases of it.
#include <chrono>
#include <cstring>
#include <thread>

#include "kernels/host/gate_residual_repro_host.h"
#include "kernels/host/rmsnorm_modulate_repro_host.h"

namespace {
const gatecheck_split_exchange* real() { return gatecheck::gate_residual_repro_host_exchange(); }
[[maybe_unused]] int lossy_combine(const gatecheck_problem* p, const uint64_t* const* s, int32_t n, uint64_t* out) {
  return real()->combine(p, s, n > 1 ? n - 1 : n, out);
}
[[maybe_unused]] int odd_tree_combine(const gatecheck_problem* p, const uint64_t* const* s, int32_t n,
                                      uint64_t* out) {
  return real()->combine(p, s, n >= 3 && n % 2 == 1 ? n - 1 : n, out);
}
// The exchange this build declares for an op's real one (Real): as it is, or
// with its partials slowed.
template <const gatecheck_split_exchange* (*Real)()>
int slow_partial(const gatecheck_call* c, uint64_t* state) {
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return Real()->partial(c, state);
}
template <const gatecheck_split_exchange* (*Real)()>
const gatecheck_split_exchange* declared() {
#ifdef SPLIT_EXCHANGE_SLOW_PARTS
  static const gatecheck_split_exchange e = [] {
    gatecheck_split_exchange x = *Real();
    x.partial = slow_partial<Real>;
    return x;
  }();
  return &e;
#else
  return Real();
#endif
}
}  // namespace

extern "C" const gatecheck_plugin* gatecheck_plugin_v1() { return gatecheck::gate_residual_repro_host_plugin(); }

#if !defined(SPLIT_EXCHANGE_LOSSY) && !defined(SPLIT_EXCHANGE_ODD_TREE)
static bool is_rmsnorm(const char* op) { return op && std::strcmp(op, "rmsnorm_modulate") == 0; }
// gate_residual: null, so that the loader takes ABI v1's.
extern "C" const gatecheck_op_plugin* gatecheck_plugin_v2(const char* op) {
  return is_rmsnorm(op) ? gatecheck::rmsnorm_modulate_repro_host_plugin() : nullptr;
}
#endif

extern "C" const gatecheck_split_exchange* gatecheck_split_exchange_v2(const char* op) {
#if !defined(SPLIT_EXCHANGE_LOSSY) && !defined(SPLIT_EXCHANGE_ODD_TREE)
  if (is_rmsnorm(op)) return declared<gatecheck::rmsnorm_modulate_repro_host_exchange>();
#endif
  if (!op || std::strcmp(op, "gate_residual") != 0) return nullptr;
#if defined(SPLIT_EXCHANGE_LOSSY) || defined(SPLIT_EXCHANGE_ODD_TREE)
  static gatecheck_split_exchange broken = [] {
    gatecheck_split_exchange e = *real();
#ifdef SPLIT_EXCHANGE_LOSSY
    e.combine = lossy_combine;
#else
    e.combine = odd_tree_combine;
#endif
    return e;
  }();
  return &broken;
#else
  return declared<real>();
#endif
}
