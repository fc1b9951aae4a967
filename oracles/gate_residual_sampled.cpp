// gate_residual's sampled oracle (oracle_sampled.h): out, grad_res and
// grad_y of the sampled rows, and grad_gate of the sampled gates on the
// sampled columns, each gate summed over all of its rows in row order (the
// float64 order of gate_residual_reference.cpp).
#include <stdexcept>

#include "op_oracles.h"
#include "oracle_elements.h"
#include "oracle_sampled.h"

namespace gatecheck {

SampledReference gate_residual_sampled(const ScaleCase& c, const ScaleSample& s) {
  const OpSchema& op = c.op();
  const size_t res = size_t(op.float_input("res")), gate = size_t(op.float_input("gate")),
               y = size_t(op.float_input("y")), g = size_t(op.float_input("grad_out"));
  const DType t = c.dtype;
  SampledReference ref = sampled_shape(c, s);
  std::vector<Expected>& out = ref.outputs[size_t(op.output_index("out"))].want;
  std::vector<Expected>& grad_res = ref.outputs[size_t(op.output_index("grad_res"))].want;
  std::vector<Expected>& grad_y = ref.outputs[size_t(op.output_index("grad_y"))].want;
  std::vector<Expected>& grad_gate = ref.outputs[size_t(op.output_index("grad_gate"))].want;
  size_t i = 0;
  for (int64_t r : s.rows) {
    const int64_t k = c.index[size_t(r)];
    for (int64_t j = 0; j < c.dim; ++j, ++i) {
      out[i] = out_expected(t, c.input_value(res, r, j), c.input_value(gate, k, j), c.input_value(y, r, j));
      grad_y[i] = grad_y_expected(t, c.input_value(g, r, j), c.input_value(gate, k, j));
      grad_res[i] = grad_res_expected(t, c.input_bits(g, r, j));
    }
  }
  std::vector<int64_t> slot(size_t(c.gates), -1);
  for (size_t n = 0; n < s.gates.size(); ++n) slot[size_t(s.gates[n])] = int64_t(n);
  const size_t nc = s.cols.size();
  std::vector<GateColumn> acc(s.gates.size() * nc);
  for (int64_t r = 0; r < c.rows; ++r) {
    const int64_t sl = slot[size_t(c.index[size_t(r)])];
    if (sl < 0) continue;
    for (size_t j = 0; j < nc; ++j)
      acc[size_t(sl) * nc + j].add(c.input_value(g, r, s.cols[j]) * c.input_value(y, r, s.cols[j]));
    ref.terms += int64_t(nc);
  }
  for (size_t n = 0; n < acc.size(); ++n) grad_gate[n] = grad_gate_expected(t, acc[n]);
  return ref;
}

}  // namespace gatecheck
