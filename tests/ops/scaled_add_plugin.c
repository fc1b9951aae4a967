/* scaled_add through the plugin ABI v2, as a user's plugin is written (C, the
 * installed header only). Built twice: as it should be, and with PLANTED=1,
 * whose grad_b leaves out the batch's last row (a reduction that stops one
 * short), which gatecheck must catch, shrink and replay. Shapes and values
 * are not checked here beyond what the op's contract names. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gatecheck_plugin_v2.h"

#ifndef PLANTED
#define PLANTED 0
#endif

static char g_error[256];

static int fail(const char* msg) {
  snprintf(g_error, sizeof g_error, "%s", msg);
  return 1;
}

static float bf16_to_float(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static uint16_t float_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}
static float f16_to_float(uint16_t h) {
  const uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  float v;
  if (exp == 0) v = ldexpf((float)man, -24);
  else if (exp == 31) v = man ? NAN : INFINITY;
  else v = ldexpf((float)(man | 0x400), (int)exp - 25);
  return sign ? -v : v;
}
static uint16_t float_to_f16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  const uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
  if (isnan(f)) return 0x7e00;
  float a = fabsf(f);
  if (a >= 65520.0f) return sign | 0x7c00;
  if (a < 6.103515625e-05f) { /* subnormal: multiples of 2^-24, ties to even */
    const float q = a * 16777216.0f;
    float r = nearbyintf(q);
    return sign | (uint16_t)r;
  }
  int e;
  const float m = frexpf(a, &e); /* a = m * 2^e, m in [0.5, 1) */
  float s = nearbyintf(ldexpf(m, 11));
  if (s >= 2048.0f) { s /= 2; ++e; }
  if (e + 14 >= 31) return sign | 0x7c00;
  return sign | (uint16_t)(((e + 14) << 10) | ((uint16_t)s & 0x3ff));
}

static float load(const gatecheck_tensor* t, int32_t dtype, int64_t i) {
  if (dtype == GATECHECK_F32) return ((const float*)t->data)[i];
  const uint16_t b = ((const uint16_t*)t->data)[i];
  return dtype == GATECHECK_BF16 ? bf16_to_float(b) : f16_to_float(b);
}
static void store(const gatecheck_tensor* t, int32_t dtype, int64_t i, float v) {
  if (dtype == GATECHECK_F32) ((float*)t->data)[i] = v;
  else ((uint16_t*)t->data)[i] = dtype == GATECHECK_BF16 ? float_to_bf16(v) : float_to_f16(v);
}
static float rn(int32_t dtype, float v) {
  if (dtype == GATECHECK_F32) return v;
  return dtype == GATECHECK_BF16 ? bf16_to_float(float_to_bf16(v)) : f16_to_float(float_to_f16(v));
}

/* The descriptors by the op's order: x, w, index, b, grad_out, out, grad_x, grad_w, grad_b. */
enum { X, W, INDEX, B, GRAD_OUT, OUT, GRAD_X, GRAD_W, GRAD_B, N_TENSORS };

static int check(const gatecheck_call* c, int backward) {
  const gatecheck_problem* p = &c->problem;
  if (c->num_tensors != N_TENSORS) return fail("scaled_add: expected 9 tensors");
  if (p->dtype != GATECHECK_F32 && p->dtype != GATECHECK_F16 && p->dtype != GATECHECK_BF16) {
    snprintf(g_error, sizeof g_error, "scaled_add: dtype = %d is not f32, f16 or bf16", p->dtype);
    return 1;
  }
  if (p->device != GATECHECK_CPU) {
    snprintf(g_error, sizeof g_error, "scaled_add: device = %d: only the cpu (0)", p->device);
    return 1;
  }
  if (p->rows < 0) { snprintf(g_error, sizeof g_error, "scaled_add: rows = %lld is negative", (long long)p->rows); return 1; }
  if (p->dim < 0) { snprintf(g_error, sizeof g_error, "scaled_add: dim = %lld is negative", (long long)p->dim); return 1; }
  if (p->gates < 0) { snprintf(g_error, sizeof g_error, "scaled_add: gates = %lld is negative", (long long)p->gates); return 1; }
  if (p->gates == 0 && p->rows > 0) return fail("scaled_add: gates = 0 with rows: every row needs a row of w");
  if (p->dim > 0 && (p->rows > INT64_MAX / 8 / p->dim || p->gates > INT64_MAX / 8 / p->dim)) {
    snprintf(g_error, sizeof g_error, "scaled_add: rows = %lld or gates = %lld times dim overflows",
             (long long)p->rows, (long long)p->gates);
    return 1;
  }
  const int used[N_TENSORS] = {1, 1, 1, !backward, backward, !backward, backward, backward, backward};
  const int64_t n = p->rows * p->dim, ng = p->gates * p->dim;
  const int64_t count[N_TENSORS] = {n, ng, p->rows, p->dim, n, n, n, ng, p->dim};
  for (int k = 0; k < N_TENSORS; ++k)
    if (used[k] && count[k] > 0 && !c->tensors[k].data) {
      snprintf(g_error, sizeof g_error, "scaled_add: %s is null", c->tensors[k].name);
      return 1;
    }
  const int64_t* index = (const int64_t*)c->tensors[INDEX].data;
  for (int64_t r = 0; r < p->rows; ++r)
    if (index[r] < 0 || index[r] >= p->gates) {
      snprintf(g_error, sizeof g_error, "scaled_add: index[%lld] = %lld is outside [0, gates = %lld)", (long long)r,
               (long long)index[r], (long long)p->gates);
      return 1;
    }
  return 0;
}

static int forward(const gatecheck_call* c) {
  if (check(c, 0)) return 1;
  const gatecheck_problem* p = &c->problem;
  const gatecheck_tensor* t = c->tensors;
  const int64_t* index = (const int64_t*)t[INDEX].data;
  for (int64_t r = 0; r < p->rows; ++r)
    for (int64_t j = 0; j < p->dim; ++j) {
      const float prod = rn(p->dtype, load(&t[X], p->dtype, r * p->dim + j) * load(&t[W], p->dtype, index[r] * p->dim + j));
      store(&t[OUT], p->dtype, r * p->dim + j, prod + load(&t[B], p->dtype, j));
    }
  return 0;
}

static int backward(const gatecheck_call* c) {
  if (check(c, 1)) return 1;
  const gatecheck_problem* p = &c->problem;
  const gatecheck_tensor* t = c->tensors;
  const int64_t* index = (const int64_t*)t[INDEX].data;
  for (int64_t j = 0; j < p->dim; ++j) {
    float gb = 0.0f;
    const int64_t last = PLANTED && p->rows > 1 ? p->rows - 1 : p->rows; /* the planted bug: one row short */
    for (int64_t r = 0; r < last; ++r) gb += load(&t[GRAD_OUT], p->dtype, r * p->dim + j);
    store(&t[GRAD_B], p->dtype, j, gb);
  }
  for (int64_t r = 0; r < p->rows; ++r)
    for (int64_t j = 0; j < p->dim; ++j) {
      const float g = load(&t[GRAD_OUT], p->dtype, r * p->dim + j);
      store(&t[GRAD_X], p->dtype, r * p->dim + j, g * load(&t[W], p->dtype, index[r] * p->dim + j));
    }
  /* grad_w in fp32, each index's rows in row order */
  for (int64_t j = 0; j < p->dim; ++j)
    for (int64_t k = 0; k < p->gates; ++k) {
      float acc = 0.0f;
      for (int64_t r = 0; r < p->rows; ++r)
        if (index[r] == k)
          acc += load(&t[GRAD_OUT], p->dtype, r * p->dim + j) * load(&t[X], p->dtype, r * p->dim + j);
      store(&t[GRAD_W], p->dtype, k * p->dim + j, acc);
    }
  return 0;
}

static const char* last_error(void) { return g_error; }

static const gatecheck_op_plugin kPlugin = {2, PLANTED ? "scaled_add (planted: grad_b one row short)" : "scaled_add",
                                             "scaled_add", 1u << GATECHECK_CPU, forward, backward, last_error};

const gatecheck_op_plugin* gatecheck_plugin_v2(const char* op) {
  return strcmp(op, "scaled_add") == 0 ? &kPlugin : NULL;
}
