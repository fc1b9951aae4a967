/* Implementations with one planted dependence each, for the sweep's tests:
 * each one is the example plugin plus the flaw below (PLANTED is set by
 * tests/sweep/CMakeLists.txt), so that every comparison of the sweep is shown
 * to fail where it must. The flaws flip the lowest bit of one element: a
 * difference no tolerance would see, and every bitwise check must. */
#include <stdint.h>

#define gatecheck_plugin_v1 example_plugin_v1 /* the example's entry point, renamed */
#include "../../examples/plugin/example_plugin.c"
#undef gatecheck_plugin_v1

#define BATCH_DEPENDENT 1   /* batches of more than 32 rows: out[r, 0] of every row has its lowest bit flipped */
#define NOT_REPEATABLE 2    /* every other backward call: grad_gate[0, 0]'s lowest bit flipped */
#define SEGMENT_DEPENDENT 3 /* a batch whose rows use more than one gate: grad_gate[k, 0] flipped for every k */

static void flip_lowest_bit(int32_t dtype, void* t, int64_t i) {
  if (dtype == GATECHECK_F32) ((uint32_t*)t)[i] ^= 1u;
  else ((uint16_t*)t)[i] ^= 1u;
}

static int planted_forward(const gatecheck_problem* p, const void* res, const void* gate, const int64_t* index,
                           const void* y, void* out) {
  const int rc = forward(p, res, gate, index, y, out);
  if (rc || PLANTED != BATCH_DEPENDENT || p->rows <= 32 || p->dim == 0) return rc;
  for (int64_t r = 0; r < p->rows; ++r) flip_lowest_bit(p->dtype, out, r * p->dim);
  return 0;
}

static int planted_backward(const gatecheck_problem* p, const void* grad_out, const void* gate,
                            const int64_t* index, const void* y, void* grad_res, void* grad_gate, void* grad_y) {
  static unsigned calls;
  const int rc = backward(p, grad_out, gate, index, y, grad_res, grad_gate, grad_y);
  if (rc || p->dim == 0 || p->gates == 0) return rc;
  if (PLANTED == NOT_REPEATABLE && calls++ % 2 == 1) flip_lowest_bit(p->dtype, grad_gate, 0);
  if (PLANTED == SEGMENT_DEPENDENT) {
    int mixed = 0;
    for (int64_t r = 1; r < p->rows; ++r) mixed = mixed || index[r] != index[0];
    if (mixed)
      for (int64_t k = 0; k < p->gates; ++k) flip_lowest_bit(p->dtype, grad_gate, k * p->dim);
  }
  return 0;
}

const gatecheck_plugin* gatecheck_plugin_v1(void);
const gatecheck_plugin* gatecheck_plugin_v1(void) {
  static const gatecheck_plugin plugin = {GATECHECK_ABI_VERSION, "planted", 1u << GATECHECK_CPU, planted_forward,
                                          planted_backward, last_error};
  return &plugin;
}
