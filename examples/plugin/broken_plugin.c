/* The example plugin with ONE deliberate bug, to show gatecheck catching it:
 *   ./gatecheck check --impl plugin:build/examples/libgatecheck_broken_plugin.so     (exits 1)
 *
 * The bug: the forward walks the columns in groups of 4 (as a vectorised
 * kernel would) and, for the dim % 4 leftover columns, reads gate row 0
 * instead of gate row index[r]. It is right whenever dim % 4 == 0 or a row
 * uses gate 0, so only a case with dim % 4 != 0 and a row of another gate
 * shows it; the smallest is rows = 1, dim = 1, gates = 2, index = [1].
 * The backward and everything else are example_plugin.c, included as is. */
#define gatecheck_plugin_v1 example_plugin_v1 /* the example's entry point, renamed */
#include "example_plugin.c"
#undef gatecheck_plugin_v1

static int broken_forward(const gatecheck_problem* p, const void* res, const void* gate,
                          const int64_t* index, const void* y, void* out) {
  const char* names[] = {"res", "gate", "y", "out"};
  const void* ptrs[] = {res, gate, y, out};
  if (validate("forward", p, index, 4, names, ptrs)) return 1;
  const int64_t full = p->dim - p->dim % 4; /* columns in whole groups of 4 */
  for (int64_t r = 0; r < p->rows; ++r)
    for (int64_t j = 0; j < p->dim; ++j) {
      int64_t gate_row = j < full ? index[r] : 0; /* BUG: the tail ignores index[r] */
      int64_t i = r * p->dim + j, gi = gate_row * p->dim + j;
      float prod = round_to_dtype(p->dtype, load(p->dtype, gate, gi) * load(p->dtype, y, i));
      store(p->dtype, out, i, load(p->dtype, res, i) + prod);
    }
  return 0;
}

const gatecheck_plugin* gatecheck_plugin_v1(void);
const gatecheck_plugin* gatecheck_plugin_v1(void) {
  static const gatecheck_plugin plugin = {1, "example-broken", 1u << GATECHECK_CPU, broken_forward,
                                          backward, last_error};
  return &plugin;
}
