#include "oracle_sampled.h"

#include <stdexcept>

#include "oracle_elements.h"

namespace gatecheck {

SampledReference oracle_sampled(const ScaleCase& c, const std::vector<int64_t>& rows,
                                const std::vector<int64_t>& gates, const std::vector<int64_t>& cols) {
  const DType t = c.dtype;
  auto val = [&](ScaleTensor which, int64_t r, int64_t j) { return double(bits_to_float(t, c.bits(which, r, j))); };
  SampledReference ref;
  ref.rows = rows;
  ref.gates = gates;
  ref.cols = cols;
  for (int64_t r : rows) {
    if (r < 0 || r >= c.rows) throw std::invalid_argument("oracle_sampled: row " + std::to_string(r) + " out of range");
    const int64_t k = c.index[size_t(r)];
    for (int64_t j = 0; j < c.dim; ++j) {
      ref.out.push_back(out_expected(t, val(kScaleRes, r, j), val(kScaleGate, k, j), val(kScaleY, r, j)));
      ref.grad_y.push_back(grad_y_expected(t, val(kScaleGradOut, r, j), val(kScaleGate, k, j)));
      ref.grad_res.push_back(grad_res_expected(t, c.bits(kScaleGradOut, r, j)));
    }
  }
  // Each sampled gate's terms in row order (the float64 order of oracle_reference).
  std::vector<int64_t> slot(size_t(c.gates), -1);
  for (size_t i = 0; i < gates.size(); ++i) {
    if (gates[i] < 0 || gates[i] >= c.gates)
      throw std::invalid_argument("oracle_sampled: gate " + std::to_string(gates[i]) + " out of range");
    slot[size_t(gates[i])] = int64_t(i);
  }
  for (int64_t j : cols)
    if (j < 0 || j >= c.dim) throw std::invalid_argument("oracle_sampled: column " + std::to_string(j) + " out of range");
  std::vector<GateColumn> acc(gates.size() * cols.size());
  for (int64_t r = 0; r < c.rows; ++r) {
    const int64_t s = slot[size_t(c.index[size_t(r)])];
    if (s < 0) continue;
    for (size_t j = 0; j < cols.size(); ++j)
      acc[size_t(s) * cols.size() + j].add(val(kScaleGradOut, r, cols[j]) * val(kScaleY, r, cols[j]));
    ref.gate_terms += int64_t(cols.size());
  }
  for (const auto& a : acc) ref.grad_gate.push_back(grad_gate_expected(t, a));
  return ref;
}

}  // namespace gatecheck
