// rmsnorm_modulate's sampled oracle (oracle_sampled.h). Every term of its
// sums needs its row's rstd, a statistic of the whole row, so the sums cannot
// be sampled by rows: every row is streamed through the row reference
// (rmsnorm_modulate_rows.h), once, in row order, and only what the sample
// asks for is kept: out and dx of the sampled rows (every column), dweight at
// the sampled columns over every row, dshift and dscale of the sampled gates
// at the sampled columns over all of their rows. The bounds are the
// whole-case reference's, element for element.
//
// Streaming costs every element of every row (values recomputed from their
// positions), so past kStreamElements the sums are not judged, and say so;
// the sampled rows' out and dx always are.
#include <string>
#include <vector>

#include "op_oracles.h"
#include "oracle_sampled.h"
#include "rmsnorm_modulate_rows.h"

namespace gatecheck {

namespace {
constexpr int64_t kStreamElements = int64_t(1) << 25;

void fill_row(const ScaleCase& c, size_t input, int64_t row, std::vector<double>& v) {
  v.resize(size_t(c.dim));
  for (int64_t j = 0; j < c.dim; ++j) v[size_t(j)] = c.input_value(input, row, j);
}
}  // namespace

SampledReference rmsnorm_modulate_sampled(const ScaleCase& c, const ScaleSample& s) {
  using namespace rms_oracle;
  const OpSchema& op = c.op();
  const size_t x = size_t(op.float_input("x")), w = size_t(op.float_input("w")), shift = size_t(op.float_input("shift")),
               scale = size_t(op.float_input("scale")), g = size_t(op.float_input("grad_out"));
  const double eps = c.spec.scalars.empty() ? op.scalars[0].default_value : c.spec.scalars[size_t(op.scalar_index("eps"))];
  const DType t = c.dtype;
  SampledReference ref = sampled_shape(c, s);
  SampledOutput& out = ref.outputs[size_t(op.output_index("out"))];
  SampledOutput& dx = ref.outputs[size_t(op.output_index("dx"))];
  SampledOutput& dweight = ref.outputs[size_t(op.output_index("dweight"))];
  SampledOutput& dshift = ref.outputs[size_t(op.output_index("dshift"))];
  SampledOutput& dscale = ref.outputs[size_t(op.output_index("dscale"))];
  const bool sums = c.elements() <= kStreamElements;
  if (!sums)
    for (SampledOutput* o : {&dweight, &dshift, &dscale})
      o->skipped = "a sum over rows of " + std::to_string(c.elements()) + " elements, past the sampled oracle's " +
                   std::to_string(kStreamElements) + " streamed";
  const size_t nc = s.cols.size();
  std::vector<int64_t> col_slot(size_t(c.dim), -1), gate_slot(size_t(c.gates), -1), row_slot(size_t(c.rows), -1);
  for (size_t n = 0; n < nc; ++n) col_slot[size_t(s.cols[n])] = int64_t(n);
  for (size_t n = 0; n < s.gates.size(); ++n) gate_slot[size_t(s.gates[n])] = int64_t(n);
  for (size_t n = 0; n < s.rows.size(); ++n) row_slot[size_t(s.rows[n])] = int64_t(n);
  std::vector<InexactSum> dw(nc), dsc(s.gates.size() * nc);
  std::vector<GateColumn> dsh(s.gates.size() * nc);
  std::vector<double> xr, gr(size_t(c.dim)), wr, hr(size_t(c.dim)), sr(size_t(c.dim));
  fill_row(c, w, 0, wr);
  RowScratch scratch;
  auto run_row = [&](int64_t r) {
    const int64_t k = c.index[size_t(r)], rs = row_slot[size_t(r)], gs = gate_slot[size_t(k)];
    RowSinks sk;
    sk.col_slot = col_slot.data();
    if (rs >= 0) {
      sk.out = out.want.data() + rs * c.dim;
      sk.dx = dx.want.data() + rs * c.dim;
    }
    if (sums) {
      sk.dweight = dw.data();
      if (gs >= 0) {
        sk.dscale = dsc.data() + size_t(gs) * nc;
        sk.dshift = dsh.data() + size_t(gs) * nc;
      }
    }
    if (!sk.out && !sk.dweight) return;
    fill_row(c, x, r, xr);
    if (sk.out) {
      fill_row(c, g, r, gr);
      fill_row(c, shift, k, hr);
      fill_row(c, scale, k, sr);
    } else {  // only the sums' columns are read (rmsnorm_modulate_rows.h)
      for (int64_t j : s.cols) {
        gr[size_t(j)] = c.input_value(g, r, j);
        hr[size_t(j)] = c.input_value(shift, k, j);
        sr[size_t(j)] = c.input_value(scale, k, j);
      }
    }
    reference_row(t, c.dim, eps, RowIn{xr.data(), gr.data(), wr.data(), hr.data(), sr.data()}, sk, scratch);
    if (sk.dweight) ref.terms += c.dim;
  };
  if (sums) {
    for (int64_t r = 0; r < c.rows; ++r) run_row(r);
  } else {
    for (int64_t r : s.rows) run_row(r);
  }
  if (sums) {
    for (size_t j = 0; j < nc; ++j) dweight.want[j] = dw[j].expected(t);
    for (size_t n = 0; n < dsc.size(); ++n) {
      dshift.want[n] = grad_gate_expected(t, dsh[n]);
      dscale.want[n] = dsc[n].expected(t);
    }
  }
  return ref;
}

}  // namespace gatecheck
