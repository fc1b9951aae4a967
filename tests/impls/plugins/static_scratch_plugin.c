/* A plugin that is right, but only from one thread at a time, as the plugin
 * ABI allows: the example plugin computing into static scratch buffers shared
 * by every call, then copying them out after a short pause (the window in
 * which a second thread's call overwrites them). Called from two threads at
 * once it returns one call's results to the other; gatecheck must still get
 * correct verdicts from it with --jobs > 1 (tests/impls/test_plugin_lock.cpp). */
#include <sched.h>
#include <time.h>

#define gatecheck_plugin_v1 example_plugin_v1 /* the example's entry point, renamed */
#include "../../../examples/plugin/example_plugin.c"
#undef gatecheck_plugin_v1

#define SCRATCH_BYTES (1 << 20) /* per tensor: enough for the tests' shapes */
static unsigned char scratch_out[SCRATCH_BYTES], scratch_grad_res[SCRATCH_BYTES], scratch_grad_gate[SCRATCH_BYTES],
    scratch_grad_y[SCRATCH_BYTES];

static void pause_a_little(void) {
  const struct timespec t = {0, 20000}; /* 20 us */
  nanosleep(&t, NULL);
}

static size_t bytes_of(const gatecheck_problem* p, int64_t rows) {
  return (size_t)(rows * p->dim) * (p->dtype == GATECHECK_F32 ? 4u : 2u);
}

/* Problems whose outputs do not fit the scratch go straight through (and are
 * never among the tests' shapes); bad arguments are the example's business. */
static int fits(const gatecheck_problem* p) {
  return p && p->rows >= 0 && p->dim >= 0 && p->gates >= 0 && p->rows <= SCRATCH_BYTES && p->gates <= SCRATCH_BYTES &&
         p->dim <= SCRATCH_BYTES && bytes_of(p, p->rows) <= SCRATCH_BYTES && bytes_of(p, p->gates) <= SCRATCH_BYTES;
}

static int scratch_forward(const gatecheck_problem* p, const void* res, const void* gate, const int64_t* index,
                           const void* y, void* out) {
  if (!fits(p) || !out) return forward(p, res, gate, index, y, out);
  const int rc = forward(p, res, gate, index, y, scratch_out);
  if (rc) return rc;
  pause_a_little();
  memcpy(out, scratch_out, bytes_of(p, p->rows));
  return 0;
}

static int scratch_backward(const gatecheck_problem* p, const void* grad_out, const void* gate, const int64_t* index,
                            const void* y, void* grad_res, void* grad_gate, void* grad_y) {
  if (!fits(p) || !grad_res || !grad_gate || !grad_y) return backward(p, grad_out, gate, index, y, grad_res, grad_gate, grad_y);
  const int rc = backward(p, grad_out, gate, index, y, scratch_grad_res, scratch_grad_gate, scratch_grad_y);
  if (rc) return rc;
  pause_a_little();
  memcpy(grad_res, scratch_grad_res, bytes_of(p, p->rows));
  memcpy(grad_gate, scratch_grad_gate, bytes_of(p, p->gates));
  memcpy(grad_y, scratch_grad_y, bytes_of(p, p->rows));
  return 0;
}

const gatecheck_plugin* gatecheck_plugin_v1(void);
const gatecheck_plugin* gatecheck_plugin_v1(void) {
  static const gatecheck_plugin plugin = {1, "static-scratch", 1u << GATECHECK_CPU, scratch_forward, scratch_backward,
                                          last_error};
  return &plugin;
}
