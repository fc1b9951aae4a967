/* A gatecheck plugin that segfaults on every call (a write through a null
 * pointer), for nightly_crash.sh: the nightly campaign must turn such a crash
 * into a failure record with a repro command, and exit 1. It once reported a
 * crashing plugin as a clean campaign, because the replay of the crash input
 * died of the same SIGSEGV before it wrote anything. */
#include <stddef.h>

#include "gatecheck_plugin.h"

static int* volatile nowhere = NULL; /* volatile: the compiler must keep the store */

static int crash(void) {
  *nowhere = 1;
  return 1;
}

static int forward(const gatecheck_problem* p, const void* res, const void* gate, const int64_t* index,
                   const void* y, void* out) {
  (void)p, (void)res, (void)gate, (void)index, (void)y, (void)out;
  return crash();
}

static int backward(const gatecheck_problem* p, const void* grad_out, const void* gate, const int64_t* index,
                    const void* y, void* grad_res, void* grad_gate, void* grad_y) {
  (void)p, (void)grad_out, (void)gate, (void)index, (void)y, (void)grad_res, (void)grad_gate, (void)grad_y;
  return crash();
}

static const char* last_error(void) { return "crashing_plugin: no error; every call crashes"; }

const gatecheck_plugin* gatecheck_plugin_v1(void) {
  static const gatecheck_plugin plugin = {GATECHECK_ABI_VERSION, "crashing", 1u << GATECHECK_CPU,
                                          forward, backward, last_error};
  return &plugin;
}
