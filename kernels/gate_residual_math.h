// The per-element math of gate_residual, written once for host and device.
// Every implementation gatecheck ships (the CUDA kernels and their host twin)
// and the oracle's eager rounding model call these functions; no other file
// spells the formulas out.
//
//   out       = round(res + round(gate * y))     two roundings, as torch eager
//   grad_res  = g                                exact
//   grad_y    = round(g * gate)                  one rounding
//   grad_gate = round(fold of fp32 partial sums of g*y over the gate's rows)
//
// Products and sums are taken in fp32 with one rounding each, then rounded to
// the storage dtype. No FMA: eager rounds the product before the add.
#pragma once

#include "gate_residual_dtype.h"

namespace gatecheck {

// Rows of one gate are summed in tiles of this many rows, counted within that
// gate's own rows in row order, so a gate's grad_gate depends only on its own
// rows (segment invariance). Partial sums are folded in tile order.
#ifndef GATECHECK_GRAD_GATE_TILE_ROWS
#define GATECHECK_GRAD_GATE_TILE_ROWS 256  // other values: for measuring only (docs/kernel-design.md)
#endif
constexpr int64_t kGradGateTileRows = GATECHECK_GRAD_GATE_TILE_ROWS;

template <class T>
GC_HD T gate_residual_out(T res, T gate, T y) {
  const T prod = round_inner<T>(mul_rn(to_float(gate), to_float(y)));
  return round_to<T>(add_rn(to_float(res), to_float(prod)));
}

template <class T>
GC_HD T gate_residual_grad_y(T grad_out, T gate) {
  return round_to<T>(mul_rn(to_float(grad_out), to_float(gate)));
}

// One fp32 term of grad_gate: g*y with one rounding (exact for bf16 and fp16
// operands, whose products fit in fp32's significand, barring underflow).
template <class T>
GC_HD float gate_residual_grad_gate_term(T grad_out, T y) {
  return mul_rn(to_float(grad_out), to_float(y));
}

// Accumulation step, used both inside a tile and to fold tile partials.
// Sums start from +0.0f, as index_add into a zeroed buffer does.
GC_HD float gate_residual_accumulate(float acc, float term) { return add_rn(acc, term); }

template <class T>
GC_HD T gate_residual_grad_gate_finish(float acc) { return round_to<T>(acc); }

}  // namespace gatecheck
