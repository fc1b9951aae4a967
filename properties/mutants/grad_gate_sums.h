// grad_gate with a pluggable summation: the mutants and the pairwise
// alternative differ from the host twin only in how one gate's terms are
// summed. Terms, accumulation steps and the final rounding still come from
// gate_residual_math.h.
#pragma once

#include <algorithm>
#include <vector>

#include "../../kernels/gate_residual_math.h"
#include "../../kernels/gatecheck_plugin.h"
#include "mutant_abi.h"

namespace gatecheck::mutants {

// The rows of each gate, in row order.
inline std::vector<std::vector<int64_t>> rows_by_gate(const gatecheck_problem& p, const int64_t* index) {
  std::vector<std::vector<int64_t>> g(size_t(p.gates));
  for (int64_t r = 0; r < p.rows; ++r) g[size_t(index[r])].push_back(r);
  return g;
}

// One gate's terms for column j, in the order of `rows`.
template <class T>
std::vector<float> gate_terms(const gatecheck_problem& p, const T* grad_out, const T* y,
                              const std::vector<int64_t>& rows, int64_t j) {
  std::vector<float> t;
  t.reserve(rows.size());
  for (int64_t r : rows) t.push_back(gate_residual_grad_gate_term(grad_out[r * p.dim + j], y[r * p.dim + j]));
  return t;
}

// The host twin's order: tiles of kGradGateTileRows terms, each summed
// sequentially from +0 with `step`, partials folded in tile order from +0.
template <class Step>
float tiled_sum(const std::vector<float>& terms, Step step) {
  float total = 0.0f;
  for (size_t t0 = 0; t0 < terms.size(); t0 += size_t(kGradGateTileRows)) {
    const size_t t1 = std::min(terms.size(), t0 + size_t(kGradGateTileRows));
    float partial = 0.0f;
    for (size_t i = t0; i < t1; ++i) partial = step(partial, terms[i]);
    total = step(total, partial);
  }
  return total;
}

// Writes every gate's grad_gate: sum(p, rows of gate k, k, j) -> fp32 sum,
// rounded once by gate_residual_grad_gate_finish.
template <class T, class Sum>
void write_grad_gate(const gatecheck_problem& p, const int64_t* index, T* grad_gate, Sum sum) {
  const auto rows = rows_by_gate(p, index);
  for (int64_t k = 0; k < p.gates; ++k)
    for (int64_t j = 0; j < p.dim; ++j)
      grad_gate[k * p.dim + j] = gate_residual_grad_gate_finish<T>(sum(rows[size_t(k)], k, j));
}

// The host twin's backward, then grad_gate recomputed as
// sum(terms, rows, k) for each gate k and column: terms are the gate's g*y
// for that column in row order, rows their row numbers. The one place the
// grad_gate mutants and the pairwise alternative differ is `sum`.
template <class Sum>
Status twin_backward_with_grad_gate(const gatecheck_problem& p, const void* grad_out, const void* gate,
                                    const int64_t* index, const void* y, void* grad_res, void* grad_gate,
                                    void* grad_y, Sum sum) {
  Status s = HostTwin::backward(p, grad_out, gate, index, y, grad_res, grad_gate, grad_y);
  if (!s.ok()) return s;
  dispatch_dtype(DType(p.dtype), [&](auto tag) {
    using T = decltype(tag);
    auto* go = static_cast<const T*>(grad_out);
    auto* v = static_cast<const T*>(y);
    write_grad_gate(p, index, static_cast<T*>(grad_gate),
                    [&](const std::vector<int64_t>& rows, int64_t k, int64_t j) {
                      return sum(gate_terms(p, go, v, rows, j), rows, k);
                    });
  });
  return Status::success();
}

}  // namespace gatecheck::mutants
