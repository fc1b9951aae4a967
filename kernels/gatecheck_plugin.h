/* gatecheck plugin ABI, version 1.
 *
 * An external gate_residual implementation is a shared library exporting one
 * extern "C" symbol, gatecheck_plugin_v1, that returns a pointer to a static
 * gatecheck_plugin. gatecheck loads it with `--impl plugin:PATH`.
 *
 *   out       = res + gate[index] * y                    [rows, dim]
 *   grad_res  = grad_out                                  [rows, dim]
 *   grad_y    = grad_out * gate[index]                    [rows, dim]
 *   grad_gate = sum over rows r with index[r]==k of grad_out[r]*y[r]   [gates, dim]
 *
 * Tensors are dense and row-major. Every float tensor has the problem's dtype.
 * A function returns 0 on success. A non-zero return on valid input is a
 * failure; on bad input (index out of range, ...) it is the expected
 * rejection, and last_error() should then name the bad argument and value.
 * The harness calls a plugin from one thread at a time.
 */
#ifndef GATECHECK_PLUGIN_H
#define GATECHECK_PLUGIN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum gatecheck_dtype  { GATECHECK_F32 = 0, GATECHECK_F16 = 1, GATECHECK_BF16 = 2 };
enum gatecheck_device { GATECHECK_CPU = 0, GATECHECK_CUDA = 1 };

typedef struct gatecheck_problem {
  int64_t rows, dim, gates;
  int32_t dtype;   /* enum gatecheck_dtype: every float tensor */
  int32_t device;  /* enum gatecheck_device: where every pointer lives */
  void* stream;    /* cudaStream_t for GATECHECK_CUDA, else NULL */
} gatecheck_problem;

typedef struct gatecheck_plugin {
  uint32_t abi_version;   /* 1 */
  const char* name;
  uint32_t devices;       /* bit (1u << device) for each device supported */
  int (*forward)(const gatecheck_problem*, const void* res, const void* gate,
                 const int64_t* index, const void* y, void* out);
  int (*backward)(const gatecheck_problem*, const void* grad_out, const void* gate,
                  const int64_t* index, const void* y,
                  void* grad_res, void* grad_gate, void* grad_y);
  const char* (*last_error)(void);  /* message for the last non-zero return */
} gatecheck_plugin;

/* the one exported symbol, extern "C" */
const gatecheck_plugin* gatecheck_plugin_v1(void);

#define GATECHECK_ABI_VERSION 1u

#ifdef __cplusplus
}
#endif

#endif /* GATECHECK_PLUGIN_H */
