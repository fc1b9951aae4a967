/* The example plugin, made to segfault at its 300th call in a process, for
 * nightly_unreplayed.sh: the fuzzer that loads it crashes after some cases,
 * but no replay of the crash input alone does (a crash that depends on the
 * calls before it, as a leak or a corrupted heap makes). The campaign must
 * still record it: the input itself, with libFuzzer's own account of the
 * crash. */
#define gatecheck_plugin_v1 example_plugin_v1
#include "examples/plugin/example_plugin.c"
#undef gatecheck_plugin_v1

static int* volatile nowhere = NULL; /* volatile: the compiler must keep the store */
static int calls;

static void count_call(void) {
  if (++calls == 300) *nowhere = 1;
}

static int late_forward(const gatecheck_problem* p, const void* res, const void* gate, const int64_t* index,
                        const void* y, void* out) {
  count_call();
  return example_plugin_v1()->forward(p, res, gate, index, y, out);
}

static int late_backward(const gatecheck_problem* p, const void* grad_out, const void* gate, const int64_t* index,
                         const void* y, void* grad_res, void* grad_gate, void* grad_y) {
  count_call();
  return example_plugin_v1()->backward(p, grad_out, gate, index, y, grad_res, grad_gate, grad_y);
}

const gatecheck_plugin* gatecheck_plugin_v1(void) {
  static const gatecheck_plugin plugin = {GATECHECK_ABI_VERSION, "late-crashing", 1u << GATECHECK_CPU,
                                          late_forward, late_backward, last_error};
  return &plugin;
}
