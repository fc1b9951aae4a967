/* A complete gatecheck plugin in plain C: gate_residual on the CPU for f32,
 * f16 and bf16.   ./gatecheck check --impl plugin:build/examples/libgatecheck_example_plugin.so
 *
 *   out       = res + gate[index] * y            two roundings, as torch eager
 *   grad_res  = grad_out,  grad_y = grad_out * gate[index]
 *   grad_gate = per gate, an fp32 sum of grad_out*y over its rows (row order), rounded once
 *
 * Every value is widened to float, computed in float, and rounded back to the
 * dtype (round to nearest even). Build with -ffp-contract=off: the product is
 * rounded before the add, never fused. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gatecheck_plugin.h"

/* ---- dtype conversions ---------------------------------------------------- */
static uint32_t bits_of(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float float_of(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

static float bf16_to_float(uint16_t h) { return float_of((uint32_t)h << 16); }
static uint16_t bf16_from_float(float f) {
  uint32_t u = bits_of(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0; /* NaN */
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16); /* round to nearest even */
}

static float f16_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0x1f) return float_of(sign | 0x7f800000u | (mant << 13)); /* Inf, NaN */
  if (exp == 0) return sign ? -(float)mant * 0x1p-24f : (float)mant * 0x1p-24f; /* zero, subnormal */
  return float_of(sign | ((exp + 112u) << 23) | (mant << 13));
}
static uint16_t f16_from_float(float f) {
  uint32_t u = bits_of(f), ax = u & 0x7fffffffu;
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  if (ax > 0x7f800000u) return sign | 0x7e00u;  /* NaN */
  if (ax >= 0x477ff000u) return sign | 0x7c00u; /* rounds to Inf */
  if (ax < 0x38800000u) { /* below 2^-14: a half subnormal. Adding 0.5 (ulp 2^-24)  */
    float r = float_of(ax) + 0.5f; /* makes the FPU round to a multiple of 2^-24. */
    return sign | (uint16_t)(bits_of(r) - 0x3f000000u);
  }
  ax += 0xfffu + ((ax >> 13) & 1u); /* round the 13 dropped bits to nearest even */
  return sign | (uint16_t)((ax - (112u << 23)) >> 13);
}

/* Element i of a tensor of the given dtype, as float, and back (rounded). */
static float load(int32_t dtype, const void* t, int64_t i) {
  if (dtype == GATECHECK_F32) return ((const float*)t)[i];
  uint16_t h = ((const uint16_t*)t)[i];
  return dtype == GATECHECK_F16 ? f16_to_float(h) : bf16_to_float(h);
}
static void store(int32_t dtype, void* t, int64_t i, float v) {
  if (dtype == GATECHECK_F32) ((float*)t)[i] = v != v ? float_of(0x7fc00000u) : v; /* one NaN, as bf16/f16 */
  else ((uint16_t*)t)[i] = dtype == GATECHECK_F16 ? f16_from_float(v) : bf16_from_float(v);
}
static float round_to_dtype(int32_t dtype, float v) {
  if (dtype == GATECHECK_F32) return v;
  return dtype == GATECHECK_F16 ? f16_to_float(f16_from_float(v)) : bf16_to_float(bf16_from_float(v));
}

/* ---- errors: last_error() names the bad argument and value ----------------- */
static char last_error_text[256];
static const char* last_error(void) { return last_error_text; }
static int fail(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error_text, sizeof last_error_text, fmt, ap);
  va_end(ap);
  return 1;
}

/* Checks the problem, each named tensor pointer (NULL is fine when it has no
 * elements) and every index. Returns 0 or the fail() code. */
static int validate(const char* op, const gatecheck_problem* p, const int64_t* index, int n,
                    const char* const names[], const void* const ptrs[]) {
  if (!p) return fail("%s: problem is NULL", op);
  if (p->dtype < GATECHECK_F32 || p->dtype > GATECHECK_BF16) return fail("%s: dtype = %d is unknown", op, p->dtype);
  if (p->device != GATECHECK_CPU) return fail("%s: device = %d is not supported (cpu only)", op, p->device);
  if (p->rows < 0 || p->dim < 0 || p->gates < 0)
    return fail("%s: rows = %" PRId64 ", dim = %" PRId64 ", gates = %" PRId64 " must not be negative", op,
                p->rows, p->dim, p->gates);
  if (p->gates == 0 && p->rows > 0) return fail("%s: gates = 0 with rows = %" PRId64 " > 0", op, p->rows);
  int64_t most = p->rows > p->gates ? p->rows : p->gates;
  if (p->dim > 0 && most > INT64_MAX / 8 / p->dim)
    return fail("%s: rows*dim or gates*dim overflows (dim = %" PRId64 ")", op, p->dim);
  for (int t = 0; t < n; ++t) {
    int64_t rows = strcmp(names[t], "gate") == 0 || strcmp(names[t], "grad_gate") == 0 ? p->gates : p->rows;
    if (!ptrs[t] && rows * p->dim > 0) return fail("%s: %s is NULL but has %" PRId64 " elements", op, names[t], rows * p->dim);
  }
  if (!index && p->rows > 0) return fail("%s: index is NULL but rows = %" PRId64, op, p->rows);
  for (int64_t r = 0; r < p->rows; ++r)
    if (index[r] < 0 || index[r] >= p->gates)
      return fail("%s: index[%" PRId64 "] = %" PRId64 " is out of range [0, %" PRId64 ")", op, r, index[r], p->gates);
  return 0;
}

/* ---- the op ------------------------------------------------------------------ */
static int forward(const gatecheck_problem* p, const void* res, const void* gate, const int64_t* index,
                   const void* y, void* out) {
  const char* names[] = {"res", "gate", "y", "out"};
  const void* ptrs[] = {res, gate, y, out};
  if (validate("forward", p, index, 4, names, ptrs)) return 1;
  for (int64_t r = 0; r < p->rows; ++r)
    for (int64_t j = 0; j < p->dim; ++j) {
      int64_t i = r * p->dim + j, gi = index[r] * p->dim + j;
      float prod = round_to_dtype(p->dtype, load(p->dtype, gate, gi) * load(p->dtype, y, i));
      store(p->dtype, out, i, load(p->dtype, res, i) + prod);
    }
  return 0;
}

static int backward(const gatecheck_problem* p, const void* grad_out, const void* gate,
                    const int64_t* index, const void* y, void* grad_res, void* grad_gate, void* grad_y) {
  const char* names[] = {"grad_out", "gate", "y", "grad_res", "grad_gate", "grad_y"};
  const void* ptrs[] = {grad_out, gate, y, grad_res, grad_gate, grad_y};
  if (validate("backward", p, index, 6, names, ptrs)) return 1;
  float* sum = calloc((size_t)(p->gates * p->dim) + 1, sizeof(float)); /* fp32 accumulators, +0 */
  if (!sum) return fail("backward: out of memory for %" PRId64 " accumulators", p->gates * p->dim);
  if (p->rows * p->dim > 0) /* grad_res is grad_out, bit for bit */
    memcpy(grad_res, grad_out, (size_t)(p->rows * p->dim) * (p->dtype == GATECHECK_F32 ? 4 : 2));
  for (int64_t r = 0; r < p->rows; ++r)
    for (int64_t j = 0; j < p->dim; ++j) {
      int64_t i = r * p->dim + j, gi = index[r] * p->dim + j;
      float g = load(p->dtype, grad_out, i);
      store(p->dtype, grad_y, i, g * load(p->dtype, gate, gi));
      sum[gi] += g * load(p->dtype, y, i);
    }
  for (int64_t k = 0; k < p->gates * p->dim; ++k) store(p->dtype, grad_gate, k, sum[k]);
  free(sum);
  return 0;
}

const gatecheck_plugin* gatecheck_plugin_v1(void) {
  static const gatecheck_plugin plugin = {1, "example", 1u << GATECHECK_CPU, forward, backward, last_error};
  return &plugin;
}
