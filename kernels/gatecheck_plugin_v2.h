/* gatecheck plugin ABI, version 2: any op.
 *
 * An implementation of one or more ops is a shared library exporting
 *
 *   const gatecheck_op_plugin* gatecheck_plugin_v2(const char* op);
 *
 * which returns the implementation of the named op ("gate_residual",
 * "rmsnorm_modulate", ...), or NULL when the library has none. gatecheck
 * loads it with `--impl plugin:PATH` and asks for the op of the run (--op).
 * `gatecheck ops` lists every op with its tensors in order.
 *
 * A call passes the problem and one descriptor per tensor of the op, in the
 * op's order: every input of the op (the index among them: int64 [rows]),
 * then every output. A forward call gets the op's forward inputs and
 * outputs; a backward call gets every input (the forward's and the incoming
 * gradients, such as grad_out) and the gradients it makes. Descriptors of
 * tensors the call does not use have data NULL. Tensors are dense and
 * row-major; every float tensor has the problem's dtype. Shapes by role:
 * row tensors [rows, dim], table tensors [gates, dim] (gathered by the
 * index), column tensors [dim] (ndim 1), the index [rows] (ndim 1).
 *
 * A function returns 0 on success. A non-zero return on valid input is a
 * failure; on bad input it is the expected rejection, and last_error() should
 * then name the bad argument and value. Nothing may be written on bad input.
 * The harness calls a plugin from one thread at a time. A library may export
 * gatecheck_plugin_v1 too (gatecheck_plugin.h); gatecheck prefers v2.
 */
#ifndef GATECHECK_PLUGIN_V2_H
#define GATECHECK_PLUGIN_V2_H

#include <stdint.h>

#include "gatecheck_plugin.h" /* gatecheck_dtype, gatecheck_device */

#ifdef __cplusplus
extern "C" {
#endif

#define GATECHECK_I64 3 /* the index's dtype in a tensor descriptor */

typedef struct gatecheck_tensor {
  const char* name; /* the op's name for it: "x", "index", "grad_out", "dx" */
  int32_t dtype;    /* GATECHECK_F32, _F16, _BF16 (the problem's), or GATECHECK_I64 */
  int32_t ndim;     /* 1 or 2 */
  int64_t shape[2]; /* shape[1] is 0 when ndim is 1 */
  void* data;       /* NULL for a tensor this call does not use */
} gatecheck_tensor;

typedef struct gatecheck_scalar {
  const char* name; /* "eps" */
  double value;
} gatecheck_scalar;

typedef struct gatecheck_call {
  const char* op;          /* "rmsnorm_modulate" */
  gatecheck_problem problem; /* rows, dim, gates, dtype, device, stream */
  int32_t num_tensors;
  const gatecheck_tensor* tensors; /* the op's inputs, then its outputs */
  int32_t num_scalars;
  const gatecheck_scalar* scalars; /* the op's scalars, in order */
} gatecheck_call;

typedef struct gatecheck_op_plugin {
  uint32_t abi_version; /* 2 */
  const char* name;
  const char* op;       /* the op this implements */
  uint32_t devices;     /* bit (1u << device) for each device supported */
  int (*forward)(const gatecheck_call*);
  int (*backward)(const gatecheck_call*);
  const char* (*last_error)(void); /* message for the last non-zero return */
} gatecheck_op_plugin;

/* the one exported symbol, extern "C" */
const gatecheck_op_plugin* gatecheck_plugin_v2(const char* op);

#define GATECHECK_ABI_VERSION_2 2u

#ifdef __cplusplus
}
#endif

#endif /* GATECHECK_PLUGIN_V2_H */
