// scaled_add's float64 reference: every element's exact value and bound,
// from the oracle's own element bounds (oracles/oracle_elements.h), which
// judge the same roundings in gate_residual: out is a product rounded, then a
// sum rounded (b + x*w, as res + gate*y); grad_x one rounding; grad_w and
// grad_b an fp32 sum of exact terms in any order.
#include "oracles/op_oracles.h"
#include "oracles/oracle_elements.h"
#include "scaled_add.h"

namespace gatecheck::test_ops {

namespace {

Reference scaled_add_reference(const Case& c) {
  const DType t = c.dtype;
  const HostTensor &x = c.input("x"), &w = c.input("w"), &b = c.input("b"), &g = c.input("grad_out");
  Reference ref = Reference::shaped(c);
  std::vector<Expected>& out = ref["out"];
  std::vector<Expected>& grad_x = ref["grad_x"];
  std::vector<GateColumn> by_index(size_t(c.gates * c.dim)), by_column(size_t(c.dim));
  for (int64_t r = 0; r < c.rows; ++r) {
    const int64_t k = c.index[size_t(r)];
    for (int64_t j = 0; j < c.dim; ++j) {
      const int64_t i = r * c.dim + j;
      const double xv = x.value(i), wv = w.value(k * c.dim + j), bv = b.value(j), gv = g.value(i);
      out[size_t(i)] = out_expected(t, bv, wv, xv);
      grad_x[size_t(i)] = grad_y_expected(t, gv, wv);
      by_index[size_t(k * c.dim + j)].add(gv * xv);
      by_column[size_t(j)].add(gv);
    }
  }
  std::vector<Expected>& grad_w = ref["grad_w"];
  std::vector<Expected>& grad_b = ref["grad_b"];
  for (size_t i = 0; i < by_index.size(); ++i) grad_w[i] = grad_gate_expected(t, by_index[i]);
  for (size_t j = 0; j < by_column.size(); ++j) grad_b[j] = grad_gate_expected(t, by_column[j]);
  return ref;
}

const bool registered = register_op_oracle(scaled_add_schema(), OpOracle{scaled_add_reference});

}  // namespace

}  // namespace gatecheck::test_ops
