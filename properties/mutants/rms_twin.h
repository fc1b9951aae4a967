// rmsnorm_modulate's planted mutants start from this twin: the op's formula
// in the plainest correct form (fp32 statistics, squares summed left to
// right, one rounding to the dtype per stored value, every reduction over
// rows in row order), with each piece a mutant may change behind a hook.
// A mutant derives from RmsHooks, replaces exactly one hook, and is put
// behind the plugin ABI v2 by RmsMutantAbi<M>.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "../../kernels/gate_residual_dtype.h"
#include "../../kernels/op_call_abi.h"
#include "../../kernels/rmsnorm_modulate.h"

namespace gatecheck::mutants {

// The correct pieces.
struct RmsHooks {
  // A row's sum of squares, in fp32, left to right. `rows` is the call's
  // batch (a correct kernel never looks at it here).
  static float sum_squares(const std::vector<float>& x, DType, int64_t /*rows*/) {
    float ss = 0.0f;
    for (float v : x) ss += v * v;
    return ss;
  }
  static float rstd(float ss, int64_t dim, float eps) { return 1.0f / std::sqrt(ss / float(dim) + eps); }
  // The table row the modulation of row r reads.
  static int64_t table_row(const int64_t* index, int64_t r, int64_t /*gates*/) { return index[r]; }
  // dweight[j] from every row's term d*x*rstd (terms[r*dim + j]), folded in row order.
  static void fold_dweight(const std::vector<float>& terms, int64_t rows, int64_t dim, std::vector<float>* dw) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < dim; ++j) (*dw)[size_t(j)] += terms[size_t(r * dim + j)];
  }
};

namespace rms_twin {

inline float load(const TensorBuf& t, DType d, int64_t i) {
  if (d == DType::f32) return static_cast<const float*>(t.data)[i];
  return bits_to_float(d, static_cast<const uint16_t*>(t.data)[i]);
}
inline void store(const TensorBuf& t, DType d, int64_t i, float v) {
  if (d == DType::f32) static_cast<float*>(t.data)[i] = v;
  else static_cast<uint16_t*>(t.data)[i] = uint16_t(float_to_bits_rn(d, v));
}
inline float rn(DType d, float v) { return d == DType::f32 ? v : bits_to_float(d, float_to_bits_rn(d, v)); }

struct Call {
  const OpSchema& op;
  const OpCall& c;
  DType d;
  float eps;
  const TensorBuf& in(const char* n) const { return c.input(n); }
  const TensorBuf& out(const char* n) const { return c.output(n); }
  std::vector<float> row(const char* n, int64_t r) const {
    std::vector<float> v(size_t(c.p.dim));
    const TensorBuf& t = in(n);
    for (int64_t j = 0; j < c.p.dim; ++j) v[size_t(j)] = load(t, d, r * c.p.dim + j);
    return v;
  }
};

template <class H>
float row_rstd(const Call& k, int64_t r) {
  return H::rstd(H::sum_squares(k.row("x", r), k.d, k.c.p.rows), k.c.p.dim, k.eps);
}

template <class H>
void forward(const Call& k) {
  const int64_t rows = k.c.p.rows, dim = k.c.p.dim;
  for (int64_t r = 0; r < rows; ++r) {
    const float rstd = row_rstd<H>(k, r);
    const int64_t t = H::table_row(k.c.index(), r, k.c.p.gates) * dim;
    for (int64_t j = 0; j < dim; ++j) {
      const float n = rn(k.d, load(k.in("w"), k.d, j) * (rstd * load(k.in("x"), k.d, r * dim + j)));
      const float f = rn(k.d, 1.0f + load(k.in("scale"), k.d, t + j));
      store(k.out("out"), k.d, r * dim + j, rn(k.d, n * f) + load(k.in("shift"), k.d, t + j));
    }
  }
}

template <class H>
void backward(const Call& k) {
  const int64_t rows = k.c.p.rows, dim = k.c.p.dim, gates = k.c.p.gates;
  const DType d = k.d;
  std::vector<float> dw(size_t(dim), 0.0f), dw_terms(size_t(rows * dim));
  std::vector<float> dshift(size_t(gates * dim), 0.0f), dscale(size_t(gates * dim), 0.0f);
  std::vector<float> dd(static_cast<size_t>(dim));
  for (int64_t r = 0; r < rows; ++r) {
    const float rstd = row_rstd<H>(k, r);
    const int64_t t = k.c.index()[r] * dim;
    float c = 0.0f;  // sum_j w*d*x, left to right
    for (int64_t j = 0; j < dim; ++j) {
      const float g = load(k.in("grad_out"), d, r * dim + j);
      const float x = load(k.in("x"), d, r * dim + j), w = load(k.in("w"), d, j);
      dd[size_t(j)] = g * rn(d, 1.0f + load(k.in("scale"), d, t + j));
      c += w * dd[size_t(j)] * x;
      dw_terms[size_t(r * dim + j)] = dd[size_t(j)] * x * rstd;
      dshift[size_t(t + j)] += g;
      dscale[size_t(t + j)] += g * rn(d, w * (rstd * x));
    }
    const float kk = rstd * rstd * rstd * c / float(dim);
    for (int64_t j = 0; j < dim; ++j) {
      const float x = load(k.in("x"), d, r * dim + j), w = load(k.in("w"), d, j);
      store(k.out("dx"), d, r * dim + j, rstd * w * dd[size_t(j)] - x * kk);
    }
  }
  H::fold_dweight(dw_terms, rows, dim, &dw);
  for (int64_t j = 0; j < dim; ++j) store(k.out("dweight"), d, j, dw[size_t(j)]);
  for (size_t i = 0; i < dshift.size(); ++i) {
    store(k.out("dshift"), d, int64_t(i), dshift[i]);
    store(k.out("dscale"), d, int64_t(i), dscale[i]);
  }
}

}  // namespace rms_twin

// M derives from RmsHooks and has `static constexpr const char* kName`.
template <class M>
struct RmsMutantAbi {
  static std::string& error() {
    static thread_local std::string e;
    return e;
  }
  static int run(const gatecheck_call* raw, Pass pass) {
    const OpSchema& op = rmsnorm_modulate_schema();
    OpCall c;
    Status s = op_call_from_abi(op, pass, raw, &c);
    if (s.ok()) s = check_call(c, 1u << GATECHECK_CPU, /*index_on_host=*/true);
    if (!s.ok()) {
      error() = s.message;
      return int(s.kind);
    }
    const rms_twin::Call k{op, c, DType(c.p.dtype), float(c.scalars[size_t(op.scalar_index("eps"))])};
    if (pass == Pass::forward) rms_twin::forward<M>(k);
    else rms_twin::backward<M>(k);
    return 0;
  }
  static int forward(const gatecheck_call* c) { return run(c, Pass::forward); }
  static int backward(const gatecheck_call* c) { return run(c, Pass::backward); }
  static const char* last_error() { return error().c_str(); }
  static const gatecheck_op_plugin* plugin() {
    static const gatecheck_op_plugin api = {GATECHECK_ABI_VERSION_2, M::kName, "rmsnorm_modulate",
                                            1u << GATECHECK_CPU, &forward, &backward, &last_error};
    return &api;
  }
};

}  // namespace gatecheck::mutants
