// rmsnorm_modulate on the host, in fp32 with one rounding to the dtype per
// stored value, as the op's formula says (op_schema.h's summary):
//   rstd = 1/sqrt(sum_j x^2 / dim + eps), the squares summed left to right;
//   n = rnd(w * (rstd * x)); out = rnd(rnd(n * f) + shift), f = rnd(1 + scale).
// Backward, every sum in a fixed order so that a call is repeatable and a
// row's dx does not depend on the batch: sum_j w*d*x left to right per row;
// dweight over the rows in order; dshift and dscale per index in row order.
// The contract's checks (check_call: shapes, eps > 0 and finite, every index
// in [0, gates)) come first and name the bad argument.
#include "rmsnorm_modulate_host.h"

#include <cmath>
#include <string>
#include <vector>

#include "../gate_residual_dtype.h"
#include "../op_call_abi.h"
#include "../rmsnorm_modulate.h"

namespace gatecheck {

namespace {

thread_local std::string g_error;

int report(const Status& s) {
  if (s.ok()) return 0;
  g_error = s.message;
  return int(s.kind);
}

float load(const TensorBuf& t, DType d, int64_t i) {
  if (d == DType::f32) return static_cast<const float*>(t.data)[i];
  return bits_to_float(d, static_cast<const uint16_t*>(t.data)[i]);
}

void store(const TensorBuf& t, DType d, int64_t i, float v) {
  if (d == DType::f32) static_cast<float*>(t.data)[i] = v;
  else static_cast<uint16_t*>(t.data)[i] = uint16_t(float_to_bits_rn(d, v));
}

// v rounded to the dtype, back in fp32.
float rn(DType d, float v) { return d == DType::f32 ? v : bits_to_float(d, float_to_bits_rn(d, v)); }

struct Views {
  const OpSchema& op = rmsnorm_modulate_schema();
  const OpCall& c;
  const TensorBuf& in(const char* n) const { return c.inputs[size_t(op.input_index(n))]; }
  const TensorBuf& out(const char* n) const { return c.outputs[size_t(op.output_index(n))]; }
};

// Row r's rstd: the squares summed left to right in fp32.
float row_rstd(const TensorBuf& x, DType d, int64_t r, int64_t dim, float eps) {
  float ss = 0.0f;
  for (int64_t j = 0; j < dim; ++j) {
    const float v = load(x, d, r * dim + j);
    ss += v * v;
  }
  return 1.0f / std::sqrt(ss / float(dim) + eps);
}

void forward(const Views& v, DType d, int64_t rows, int64_t dim, float eps) {
  const int64_t* index = v.c.index();
  for (int64_t r = 0; r < rows; ++r) {
    const float rstd = row_rstd(v.in("x"), d, r, dim, eps);
    const int64_t t = index[r] * dim;
    for (int64_t j = 0; j < dim; ++j) {
      const float n = rn(d, load(v.in("w"), d, j) * (rstd * load(v.in("x"), d, r * dim + j)));
      const float f = rn(d, 1.0f + load(v.in("scale"), d, t + j));
      store(v.out("out"), d, r * dim + j, rn(d, n * f) + load(v.in("shift"), d, t + j));
    }
  }
}

void backward(const Views& v, DType d, int64_t rows, int64_t dim, int64_t gates, float eps) {
  const int64_t* index = v.c.index();
  std::vector<float> dw(size_t(dim), 0.0f), dshift(size_t(gates * dim), 0.0f), dscale(size_t(gates * dim), 0.0f);
  std::vector<float> dd(static_cast<size_t>(dim));
  for (int64_t r = 0; r < rows; ++r) {
    const float rstd = row_rstd(v.in("x"), d, r, dim, eps);
    const int64_t t = index[r] * dim;
    float c = 0.0f;  // sum_j w*d*x, left to right
    for (int64_t j = 0; j < dim; ++j) {
      const float g = load(v.in("grad_out"), d, r * dim + j);
      const float x = load(v.in("x"), d, r * dim + j), w = load(v.in("w"), d, j);
      dd[size_t(j)] = g * rn(d, 1.0f + load(v.in("scale"), d, t + j));
      c += w * dd[size_t(j)] * x;
      dw[size_t(j)] += dd[size_t(j)] * x * rstd;
      dshift[size_t(t + j)] += g;
      dscale[size_t(t + j)] += g * rn(d, w * (rstd * x));
    }
    const float k = rstd * rstd * rstd * c / float(dim);
    for (int64_t j = 0; j < dim; ++j) {
      const float x = load(v.in("x"), d, r * dim + j), w = load(v.in("w"), d, j);
      store(v.out("dx"), d, r * dim + j, rstd * w * dd[size_t(j)] - x * k);
    }
  }
  for (int64_t j = 0; j < dim; ++j) store(v.out("dweight"), d, j, dw[size_t(j)]);
  for (size_t i = 0; i < dshift.size(); ++i) {
    store(v.out("dshift"), d, int64_t(i), dshift[i]);
    store(v.out("dscale"), d, int64_t(i), dscale[i]);
  }
}

int run(const gatecheck_call* raw, Pass pass) {
  const OpSchema& op = rmsnorm_modulate_schema();
  OpCall c;
  Status s = op_call_from_abi(op, pass, raw, &c);
  if (s.ok()) s = check_call(c, 1u << GATECHECK_CPU, /*index_on_host=*/true);
  if (!s.ok()) return report(s);
  const Views v{op, c};
  const DType d = DType(c.p.dtype);
  const float eps = float(c.scalars[size_t(op.scalar_index("eps"))]);
  if (pass == Pass::forward) forward(v, d, c.p.rows, c.p.dim, eps);
  else backward(v, d, c.p.rows, c.p.dim, c.p.gates, eps);
  return 0;
}

int forward_call(const gatecheck_call* c) { return run(c, Pass::forward); }
int backward_call(const gatecheck_call* c) { return run(c, Pass::backward); }
const char* last_error() { return g_error.c_str(); }

const gatecheck_op_plugin kHost{2,           "rmsnorm_modulate host", "rmsnorm_modulate", 1u << GATECHECK_CPU,
                                forward_call, backward_call,           last_error};

}  // namespace

const gatecheck_op_plugin* rmsnorm_modulate_host_plugin() { return &kHost; }

}  // namespace gatecheck
