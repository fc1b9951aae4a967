// rmsnorm_modulate's float64 reference on a whole case: every row through
// the row reference (rmsnorm_modulate_rows.h, which holds the derivation),
// every column of every sum; a large case's rows on threads, with the same
// bits as on one.
#include <algorithm>
#include <vector>

#include "../kernels/rmsnorm_modulate.h"
#include "op_oracles.h"
#include "oracle_threads.h"
#include "rmsnorm_modulate_rows.h"

namespace gatecheck {

RmsRowOverflow rmsnorm_modulate_row_overflow(const Case& c, int64_t r) {
  const HostTensor& x = c.input("x");
  std::vector<double> xr(static_cast<size_t>(c.dim));
  for (int64_t j = 0; j < c.dim; ++j) xr[size_t(j)] = x.value(r * c.dim + j);
  const rms_oracle::RowOverflow o = rms_oracle::row_overflow(xr.data(), c.dim, c.scalar("eps"));
  return {o.may, o.must};
}

namespace {

using rms_oracle::InexactSum;

// Row r's inputs as doubles at columns [j0, j1) (each vector [dim]).
struct RowWork {
  std::vector<double> x, g, w, shift, scale;
  rms_oracle::RowScratch scratch;
  rms_oracle::RowIn in() const { return {x.data(), g.data(), w.data(), shift.data(), scale.data()}; }
};

void columns_of(const HostTensor& h, int64_t r, int64_t dim, int64_t j0, int64_t j1, std::vector<double>& v) {
  v.resize(size_t(dim));
  for (int64_t j = j0; j < j1; ++j) v[size_t(j)] = h.value(r * dim + j);
}
void row_inputs(const Case& c, int64_t r, int64_t j0, int64_t j1, RowWork& w) {
  const int64_t dim = c.dim, k = c.index[size_t(r)];
  columns_of(c.input("x"), r, dim, j0, j1, w.x);
  columns_of(c.input("grad_out"), r, dim, j0, j1, w.g);
  columns_of(c.input("shift"), k, dim, j0, j1, w.shift);
  columns_of(c.input("scale"), k, dim, j0, j1, w.scale);
}

// What every column of a row needs, the rows on threads; then the columns
// on threads, each taking every row in order: each sum gets its terms in row
// order, as on one thread, so the bits are the same for any count.
template <class Sinks>
void rows_then_columns_on_threads(const Case& c, int threads, double eps, const Sinks& sinks, std::vector<RowWork>& work) {
  using namespace rms_oracle;
  const int64_t rows = c.rows, dim = c.dim;
  std::vector<RowPrelude> pre(static_cast<size_t>(rows));
  oracle_threads::run(threads, [&](int t) {
    const auto [r0, r1] = oracle_threads::piece(0, rows, t, threads);
    for (int64_t r = r0; r < r1; ++r) {
      row_inputs(c, r, 0, dim, work[size_t(t)]);
      pre[size_t(r)] = row_prelude(c.dtype, dim, eps, work[size_t(t)].in(), /*with_c=*/true);
    }
  });
  oracle_threads::run(threads, [&](int t) {
    const auto [j0, j1] = oracle_threads::piece(0, dim, t, threads);
    RowWork& w = work[size_t(t)];
    for (int64_t r = 0; r < rows; ++r) {
      row_inputs(c, r, j0, j1, w);
      reference_row_columns(c.dtype, dim, w.in(), sinks(r), w.scratch, pre[size_t(r)], j0, j1);
    }
  });
}

}  // namespace

Reference rmsnorm_modulate_reference_on_threads(const Case& c, int threads) {
  using namespace rms_oracle;
  const int64_t rows = c.rows, dim = c.dim;
  const double eps = c.scalar("eps");
  Reference ref = Reference::shaped(c);
  Expected* out = ref["out"].data();
  Expected* dx = ref["dx"].data();
  const size_t ncols = static_cast<size_t>(dim), ntable = static_cast<size_t>(c.gates * dim);
  std::vector<InexactSum> dweight(ncols), dscale(ntable);
  std::vector<GateColumn> dshift(ntable);
  threads = int(std::max<int64_t>(1, std::min<int64_t>(threads, dim)));
  std::vector<RowWork> work(static_cast<size_t>(threads));
  for (RowWork& w : work) columns_of(c.input("w"), 0, dim, 0, dim, w.w);
  auto sinks = [&](int64_t r) {
    const int64_t tb = c.index[size_t(r)] * dim;
    RowSinks s;
    s.out = out + r * dim;
    s.dx = dx + r * dim;
    s.dweight = dweight.data();
    s.dscale = dscale.data() + tb;
    s.dshift = dshift.data() + tb;
    return s;
  };
  if (threads == 1) {  // the engine's cases: each row read once, in one pass
    for (int64_t r = 0; r < rows; ++r) {
      row_inputs(c, r, 0, dim, work[0]);
      reference_row(c.dtype, dim, eps, work[0].in(), sinks(r), work[0].scratch);
    }
  } else {
    rows_then_columns_on_threads(c, threads, eps, sinks, work);
  }
  const DType t = c.dtype;
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

Reference rmsnorm_modulate_reference(const Case& c) {
  return rmsnorm_modulate_reference_on_threads(c, oracle_threads::for_elements(c.rows * c.dim));
}

}  // namespace gatecheck
