// rmsnorm_modulate's float64 reference on a whole case: every row through
// the row reference (rmsnorm_modulate_rows.h, which holds the derivation),
// every column of every sum.
#include <vector>

#include "../kernels/rmsnorm_modulate.h"
#include "op_oracles.h"
#include "rmsnorm_modulate_rows.h"

namespace gatecheck {

RmsRowOverflow rmsnorm_modulate_row_overflow(const Case& c, int64_t r) {
  const HostTensor& x = c.input("x");
  std::vector<double> xr(static_cast<size_t>(c.dim));
  for (int64_t j = 0; j < c.dim; ++j) xr[size_t(j)] = x.value(r * c.dim + j);
  const rms_oracle::RowOverflow o = rms_oracle::row_overflow(xr.data(), c.dim, c.scalar("eps"));
  return {o.may, o.must};
}

Reference rmsnorm_modulate_reference(const Case& c) {
  using namespace rms_oracle;
  const DType t = c.dtype;
  const int64_t rows = c.rows, dim = c.dim;
  const HostTensor &x = c.input("x"), &w = c.input("w"), &shift = c.input("shift"), &scale = c.input("scale"),
                   &g = c.input("grad_out");
  const double eps = c.scalar("eps");
  Reference ref = Reference::shaped(c);
  std::vector<Expected>& out = ref["out"];
  std::vector<Expected>& dx = ref["dx"];
  const size_t ncols = static_cast<size_t>(dim), ntable = static_cast<size_t>(c.gates * dim);
  std::vector<InexactSum> dweight(ncols), dscale(ntable);
  std::vector<GateColumn> dshift(ntable);
  auto row_of = [&](const HostTensor& h, int64_t r, std::vector<double>& v) {
    v.resize(ncols);
    for (int64_t j = 0; j < dim; ++j) v[size_t(j)] = h.value(r * dim + j);
  };
  std::vector<double> xr, gr, wr, hr, sr;
  row_of(w, 0, wr);
  RowScratch scratch;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t k = c.index[size_t(r)], tb = k * dim;
    row_of(x, r, xr);
    row_of(g, r, gr);
    row_of(shift, k, hr);
    row_of(scale, k, sr);
    RowSinks s;
    s.out = out.data() + r * dim;
    s.dx = dx.data() + r * dim;
    s.dweight = dweight.data();
    s.dscale = dscale.data() + tb;
    s.dshift = dshift.data() + tb;
    reference_row(t, dim, eps, RowIn{xr.data(), gr.data(), wr.data(), hr.data(), sr.data()}, s, scratch);
  }
  std::vector<Expected>& dw = ref["dweight"];
  std::vector<Expected>& dsh = ref["dshift"];
  std::vector<Expected>& dsc = ref["dscale"];
  for (size_t j = 0; j < dweight.size(); ++j) dw[j] = dweight[j].expected(t);
  for (size_t i = 0; i < dshift.size(); ++i) {
    dsh[i] = grad_gate_expected(t, dshift[i]);
    dsc[i] = dscale[i].expected(t);
  }
  return ref;
}

}  // namespace gatecheck
