// rmsnorm_modulate on the host, in fp32 with one rounding to the dtype per
// stored value, as the op's formula says (op_schema.h's summary):
//   rstd = 1/sqrt(sum_j x^2 / dim + eps);
//   n = rnd(w * (rstd * x)); out = rnd(rnd(n * f) + shift), f = rnd(1 + scale);
//   the backward's sums of w*d*x, g*n and d*x*rstd, and dx's x*k, with their
//   last product fused (std::fma), as the CUDA kernels' __fmaf_rn.
// Every reduction in the orders of rmsnorm_modulate_order.h, the CUDA
// kernels' orders, so that both compute the same bits: a row's sums (of x^2,
// of w*d*x) in partials by chunk and a fixed tree, fixed by dim alone;
// dshift and dscale per gate in tiles of its rows; dweight in groups of
// those tiles. Every sum is thus repeatable and a row's outputs do not
// depend on the batch.
// The contract's checks (check_call: shapes, eps > 0 and finite, every index
// in [0, gates)) come first and name the bad argument.
#include "rmsnorm_modulate_host.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "../gate_residual_dtype.h"
#include "../op_call_abi.h"
#include "../plugin_adapter.h"
#include "../rmsnorm_modulate.h"
#include "../rmsnorm_modulate_order.h"

namespace gatecheck {

namespace {

using Abi = PluginAdapter<struct RmsHostTag>;
int report(const Status& s) { return Abi::report(s); }

// An element of T's tensor as fp32, and one stored from fp32, T fixed at
// compile time: the loops below carry no branch on the dtype.
template <class T>
float load(const TensorBuf& t, int64_t i) { return to_float(static_cast<const T*>(t.data)[i]); }

// NaN stored canonical in every dtype (round_to), as the CUDA kernels store it.
template <class T>
void store(const TensorBuf& t, int64_t i, float v) { static_cast<T*>(t.data)[i] = round_to<T>(v); }

// v rounded to T, back in fp32 (in fp32 itself, v as it is).
template <class T>
float rn(float v) {
  if constexpr (std::is_same_v<T, float>) return v;
  else return to_float(round_to<T>(v));
}

// The call's tensors, found by name once a call, not once an element (as
// RmsHostTerms does: the lookups were a quarter of host-repro's time).
struct Views {
  const OpCall& c;
  const TensorBuf &x, &w, &shift, &scale, &grad_out;
  const TensorBuf &out, &dx, &dweight, &dshift, &dscale;
  explicit Views(const OpCall& call)
      : c(call), x(c.input("x")), w(c.input("w")), shift(c.input("shift")), scale(c.input("scale")),
        grad_out(c.input("grad_out")), out(c.output("out")), dx(c.output("dx")), dweight(c.output("dweight")),
        dshift(c.output("dshift")), dscale(c.output("dscale")) {}
};

// a[0] after the order's pairwise tree over 32 values.
float tree32(const float* in) {
  float a[32];
  for (int i = 0; i < 32; ++i) a[i] = in[i];
  for (int h = 16; h; h >>= 1)
    for (int i = 0; i < h; ++i) a[i] = a[i] + a[i + h];
  return a[0];
}

// A row's sum in the order's partials and trees: each partial from +0 by
// p = add(p, j) over its columns j in order, then the partials' trees.
template <class T, class Add>
float row_sum(int64_t dim, Add add) {
  const int vec = rms_vec(int(sizeof(T))), threads = rms_row_threads(dim, vec);
  float part[1024];  // rms_row_threads' largest; on the stack, not allocated a row
  std::fill(part, part + threads, 0.0f);
  int t = 0;  // the chunk's partial (chunk mod threads), kept as the chunks advance: no division an element
  for (int64_t c0 = 0; c0 < dim; c0 += vec, t = t + 1 == threads ? 0 : t + 1) {
    float& p = part[t];
    for (int64_t j = c0, end = std::min<int64_t>(dim, c0 + vec); j < end; ++j) p = add(p, j);
  }
  float warps[32] = {};
  for (int w = 0; w < threads / 32; ++w) warps[w] = tree32(&part[w * 32]);
  return tree32(warps);
}

float rstd_of(float ss, int64_t dim, float eps) { return 1.0f / std::sqrt(ss / float(dim) + eps); }

// Row r's rstd.
template <class T>
float row_rstd(const TensorBuf& x, int64_t r, int64_t dim, float eps) {
  return rstd_of(row_sum<T>(dim, [&](float p, int64_t j) {
                   const float v = load<T>(x, r * dim + j);
                   return p + v * v;
                 }),
                 dim, eps);
}

template <class T>
void forward(const Views& v, int64_t rows, int64_t dim, float eps) {
  const int64_t* index = v.c.index();
  for (int64_t r = 0; r < rows; ++r) {
    const float rstd = row_rstd<T>(v.x, r, dim, eps);
    const int64_t t = index[r] * dim;
    for (int64_t j = 0; j < dim; ++j) {
      const float n = rn<T>(load<T>(v.w, j) * (rstd * load<T>(v.x, r * dim + j)));
      const float f = rn<T>(1.0f + load<T>(v.scale, t + j));
      store<T>(v.out, r * dim + j, rn<T>(n * f) + load<T>(v.shift, t + j));
    }
  }
}

// dx, row by row; returns each row's rstd.
template <class T>
std::vector<float> backward_rows(const Views& v, int64_t rows, int64_t dim, float eps) {
  const int64_t* index = v.c.index();
  std::vector<float> rstds(static_cast<size_t>(rows));
  std::vector<float> dd(static_cast<size_t>(dim));
  for (int64_t r = 0; r < rows; ++r) {
    const float rstd = row_rstd<T>(v.x, r, dim, eps);
    rstds[size_t(r)] = rstd;
    const int64_t t = index[r] * dim;
    for (int64_t j = 0; j < dim; ++j)
      dd[size_t(j)] = load<T>(v.grad_out, r * dim + j) * rn<T>(1.0f + load<T>(v.scale, t + j));
    const float c = row_sum<T>(dim, [&](float p, int64_t j) {  // p + w*d*x, the last product fused
      return std::fma(load<T>(v.w, j) * dd[size_t(j)], load<T>(v.x, r * dim + j), p);
    });
    const float k = rstd * rstd * rstd * c / float(dim);
    for (int64_t j = 0; j < dim; ++j) {
      const float x = load<T>(v.x, r * dim + j), w = load<T>(v.w, j);
      store<T>(v.dx, r * dim + j, std::fma(-x, k, rstd * w * dd[size_t(j)]));  // rstd w d - x k, fused
    }
  }
  return rstds;
}

// dshift, dscale and dweight: each gate's rows in batch order, in tiles of
// kRmsSegTileRows; the tiles of every gate, in order, in groups for dweight.
template <class T>
void backward_columns(const Views& v, int64_t rows, int64_t dim, int64_t gates, const std::vector<float>& rstds) {
  const int64_t* index = v.c.index();
  std::vector<std::vector<int64_t>> seg(static_cast<size_t>(gates));
  for (int64_t r = 0; r < rows; ++r) seg[size_t(index[r])].push_back(r);
  const int64_t per_group = rms_tiles_per_group(rows, gates);
  const RmsHostTerms terms(v.c);
  std::vector<float> dw_group(static_cast<size_t>(dim), 0.0f), dw(dw_group);
  std::vector<float> sh(static_cast<size_t>(dim)), sc(sh), fold_sh(sh), fold_sc(sh);
  int64_t tiles_done = 0;
  auto end_group = [&] {
    for (int64_t j = 0; j < dim; ++j) {
      dw[size_t(j)] = dw[size_t(j)] + dw_group[size_t(j)];
      dw_group[size_t(j)] = 0.0f;
    }
  };
  for (int64_t k = 0; k < gates; ++k) {
    const auto& rs = seg[size_t(k)];
    const int64_t n = int64_t(rs.size()), tiles = (n + kRmsSegTileRows - 1) / kRmsSegTileRows;
    std::fill(fold_sh.begin(), fold_sh.end(), 0.0f);
    std::fill(fold_sc.begin(), fold_sc.end(), 0.0f);
    for (int64_t i = 0; i < tiles; ++i) {
      std::fill(sh.begin(), sh.end(), 0.0f);
      std::fill(sc.begin(), sc.end(), 0.0f);
      const int64_t end = std::min(n, (i + 1) * kRmsSegTileRows);
      for (int64_t p = i * kRmsSegTileRows; p < end; ++p) {
        const int64_t r = rs[size_t(p)];
        const float rstd = rstds[size_t(r)];
        for (int64_t j = 0; j < dim; ++j) {
          const RmsColumnTerms t = terms.column_terms_of<T>(r, j, rstd);
          sh[size_t(j)] = sh[size_t(j)] + t.dshift();
          sc[size_t(j)] = std::fma(t.g, t.n, sc[size_t(j)]);                      // + g*n, fused
          dw_group[size_t(j)] = std::fma(t.dx_product, rstd, dw_group[size_t(j)]);  // + d*x*rstd, fused
        }
      }
      for (int64_t j = 0; j < dim; ++j) {
        fold_sh[size_t(j)] = fold_sh[size_t(j)] + sh[size_t(j)];
        fold_sc[size_t(j)] = fold_sc[size_t(j)] + sc[size_t(j)];
      }
      if (++tiles_done % per_group == 0) end_group();
    }
    // One tile: its sums as they are; several: folded in order from +0.
    const std::vector<float>& out_sh = tiles == 1 ? sh : fold_sh;
    const std::vector<float>& out_sc = tiles == 1 ? sc : fold_sc;
    for (int64_t j = 0; j < dim; ++j) {
      store<T>(v.dshift, k * dim + j, out_sh[size_t(j)]);
      store<T>(v.dscale, k * dim + j, out_sc[size_t(j)]);
    }
  }
  if (tiles_done % per_group != 0) end_group();
  for (int64_t j = 0; j < dim; ++j) store<T>(v.dweight, j, dw[size_t(j)]);
}

template <class T>
void backward(const Views& v, int64_t rows, int64_t dim, int64_t gates, float eps) {
  backward_columns<T>(v, rows, dim, gates, backward_rows<T>(v, rows, dim, eps));
}

int run(const gatecheck_call* raw, Pass pass) {
  const OpSchema& op = rmsnorm_modulate_schema();
  OpCall c;
  Status s = op_call_from_abi(op, pass, raw, &c);
  if (s.ok()) s = check_call(c, 1u << GATECHECK_CPU, /*index_on_host=*/true);
  if (!s.ok()) return report(s);
  const Views v(c);
  const float eps = float(c.scalars[size_t(op.scalar_index("eps"))]);
  dispatch_dtype(DType(c.p.dtype), [&](auto tag) {
    using T = decltype(tag);
    if (pass == Pass::forward) forward<T>(v, c.p.rows, c.p.dim, eps);
    else backward<T>(v, c.p.rows, c.p.dim, c.p.gates, eps);
  });
  return 0;
}

int forward_call(const gatecheck_call* c) { return run(c, Pass::forward); }
int backward_call(const gatecheck_call* c) { return run(c, Pass::backward); }

const gatecheck_op_plugin kHost{2,           "rmsnorm_modulate host", "rmsnorm_modulate", 1u << GATECHECK_CPU,
                                forward_call, backward_call,           Abi::last_error};

}  // namespace

const gatecheck_op_plugin* rmsnorm_modulate_host_plugin() { return &kHost; }

RmsHostTerms::RmsHostTerms(const OpCall& c)
    : c_(c),
      x_(c.input("x")),
      w_(c.input("w")),
      scale_(c.input("scale")),
      g_(c.input("grad_out")),
      index_(c.index()),
      eps_(float(c.scalars[size_t(rmsnorm_modulate_schema().scalar_index("eps"))])) {}

float RmsHostTerms::row_rstd(int64_t r) const {
  float v = 0;
  dispatch_dtype(DType(c_.p.dtype), [&](auto tag) { v = gatecheck::row_rstd<decltype(tag)>(x_, r, c_.p.dim, eps_); });
  return v;
}

template <class T>
RmsColumnTerms RmsHostTerms::column_terms_of(int64_t r, int64_t j, float rstd) const {
  const int64_t dim = c_.p.dim, k = index_[r];
  const float g = load<T>(g_, r * dim + j);
  const float x = load<T>(x_, r * dim + j), w = load<T>(w_, j);
  const float dd = g * rn<T>(1.0f + load<T>(scale_, k * dim + j));
  return {dd * x, g, rn<T>(w * (rstd * x))};
}

RmsColumnTerms RmsHostTerms::column_terms(int64_t r, int64_t j, float rstd) const {
  RmsColumnTerms t{};
  dispatch_dtype(DType(c_.p.dtype), [&](auto tag) { t = column_terms_of<decltype(tag)>(r, j, rstd); });
  return t;
}

}  // namespace gatecheck
