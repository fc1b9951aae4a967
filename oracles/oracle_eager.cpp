// Bitwise model of torch eager: res + gate.index_select(0, idx) * y, with
// autograd. Eager computes every elementwise op in fp32 and rounds to the
// dtype, which is exactly the per-element math in gate_residual_math.h, so
// out, grad_res and grad_y call it.
//
// grad_gate is the backward of index_select: zeros(gates, dim).index_add_(0,
// idx, grad_out * y). The product is one elementwise op (rounded to the
// dtype), and LibTorch 1.13's CPU index_add adds source rows one index entry
// at a time in row order, each add in fp32 rounded to the dtype:
//     acc_k = +0;  for r in rows with index[r] == k:  acc_k = RN_T(acc_k + RN_T(g_r*y_r))
// This accumulates in the dtype, which is why eager's bf16/fp16 grad_gate
// loses accuracy on long segments. tests/oracle/eager_model_vs_torch_test.cpp
// checks the whole model, grad_gate included, bit for bit against LibTorch
// 1.13 on the CPU. On CUDA index_add uses atomics, so its order is not
// fixed; nobody claims grad_gate bitwise against this model.
#include <cstring>
#include <stdexcept>

#include "../kernels/gate_residual_math.h"
#include "oracle.h"

namespace gatecheck {

namespace {

template <class T>
T load(const HostTensor& h, int64_t i) {
  T v;
  std::memcpy(&v, h.bytes.data() + size_t(i) * sizeof(T), sizeof(T));
  return v;
}
template <class T>
void store(HostTensor& h, int64_t i, T v) {
  std::memcpy(h.bytes.data() + size_t(i) * sizeof(T), &v, sizeof(T));
}

template <class T>
Outputs eager_typed(const Case& c) {
  Outputs o;
  o.out = HostTensor(c.dtype, c.rows, c.dim);
  o.grad_res = c.grad_out;  // autograd passes g through to res unchanged
  o.grad_y = HostTensor(c.dtype, c.rows, c.dim);
  o.grad_gate = HostTensor(c.dtype, c.gates, c.dim);  // zeros: all +0 bits
  for (int64_t r = 0; r < c.rows; ++r) {
    const int64_t gbase = c.index[size_t(r)] * c.dim;
    for (int64_t j = 0; j < c.dim; ++j) {
      const int64_t i = r * c.dim + j, k = gbase + j;
      const T g = load<T>(c.grad_out, i), y = load<T>(c.y, i), gate = load<T>(c.gate, k);
      store(o.out, i, gate_residual_out(load<T>(c.res, i), gate, y));
      store(o.grad_y, i, gate_residual_grad_y(g, gate));
      // grad_out * y is the same one-rounding product as grad_y's.
      const T term = gate_residual_grad_y(g, y);
      const float sum = gate_residual_accumulate(to_float(load<T>(o.grad_gate, k)), to_float(term));
      store(o.grad_gate, k, gate_residual_grad_gate_finish<T>(sum));
    }
  }
  return o;
}

}  // namespace

Outputs eager_model(const Case& c) {
  require_valid_case("eager_model", c);
  switch (c.dtype) {
    case DType::f32: return eager_typed<float>(c);
    case DType::f16: return eager_typed<f16_t>(c);
    case DType::bf16: return eager_typed<bf16_t>(c);
  }
  throw std::invalid_argument("eager_model: unknown dtype");
}

}  // namespace gatecheck
