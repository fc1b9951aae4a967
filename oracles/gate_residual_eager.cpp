// Bitwise model of torch eager: res + gate.index_select(0, idx) * y, with
// autograd. Eager computes every elementwise op in fp32 and rounds to the
// dtype:
//     out    = RN_T(res + RN_T(gate * y))        two roundings, no FMA
//     grad_y = RN_T(g * gate),  grad_res = g
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
//
// The arithmetic here is the oracle's own, not the kernels' per-element math
// (kernels/gate_residual_math.h), so a wrong rounding there cannot hide in the
// model that judges it: only the dtype conversions are shared.
#include <stdexcept>

#include "op_oracles.h"

namespace gatecheck {

namespace {

// fp32 arithmetic with one rounding, taken in float64: a product of two fp32
// values is exact in float64, and a sum rounded to float64 and then to fp32
// equals the fp32 sum, since 53 >= 2*24 + 2 (double rounding is innocuous for
// +, -, *, /: Figueroa, "When is double rounding innocuous?", 1995).
float fp32_mul(float a, float b) { return float(double(a) * double(b)); }
float fp32_add(float a, float b) { return float(double(a) + double(b)); }

// RN_T of an fp32 value, back as the dtype's exact value in fp32.
float rn(DType t, float x) { return bits_to_float(t, float_to_bits_rn(t, x)); }

}  // namespace

Outputs gate_residual_eager_model(const Case& c) {
  const DType t = c.dtype;
  const HostTensor &res = c.input("res"), &gate_t = c.input("gate"), &y_t = c.input("y"), &grad_out = c.input("grad_out");
  Outputs o = outputs_for(c);  // zeros: all +0 bits
  HostTensor& out = o["out"];
  HostTensor& grad_y = o["grad_y"];
  HostTensor& grad_gate = o["grad_gate"];
  o["grad_res"] = grad_out;  // autograd passes g through to res unchanged
  for (int64_t r = 0; r < c.rows; ++r) {
    const int64_t gbase = c.index[size_t(r)] * c.dim;
    for (int64_t j = 0; j < c.dim; ++j) {
      const int64_t i = r * c.dim + j, k = gbase + j;
      const float g = grad_out.value(i), y = y_t.value(i), gate = gate_t.value(k);
      const float prod = rn(t, fp32_mul(gate, y));
      out.set_bits(i, float_to_bits_rn(t, fp32_add(res.value(i), prod)));
      grad_y.set_bits(i, float_to_bits_rn(t, fp32_mul(g, gate)));
      const float term = rn(t, fp32_mul(g, y));
      grad_gate.set_bits(k, float_to_bits_rn(t, fp32_add(grad_gate.value(k), term)));
    }
  }
  return o;
}

}  // namespace gatecheck
