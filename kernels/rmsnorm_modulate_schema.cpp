// rmsnorm_modulate described as data (op_schema.h): RMSNorm with AdaLN
// modulation, as diffusers composes it. The order of the inputs is the order
// of its guarded buffers, of a corpus file's tensors and of the ABI v2's
// descriptors: x, w, shift, scale, index, then grad_out for the backward.
#include "rmsnorm_modulate.h"

namespace gatecheck {

const OpSchema& rmsnorm_modulate_schema() {
  static const OpSchema s{
      "rmsnorm_modulate",
      "rstd = 1/sqrt(mean_j x^2 + eps); n = w * (rstd * x); out = n * (1 + scale[index]) + shift[index]; "
      "d = g * (1 + scale[index]): dx = rstd*w*d - x*rstd^3*sum_j(w*d*x)/dim, dweight = sum over rows of "
      "d*x*rstd, dshift[k] = sum over rows with index k of g, dscale[k] = the same of g * n",
      {
          {"x", Role::row, Fill::factor},
          {"w", Role::column, Fill::factor},
          // The backward reads neither shift nor its values: dshift is a sum of g.
          {"shift", Role::table, Fill::addend, Pass::forward, nullptr, /*in_backward=*/false},
          {"scale", Role::table, Fill::small_factor},
          {"index", Role::index},
          {"grad_out", Role::row, Fill::upstream, Pass::backward, "out"},
      },
      {
          {"out", Role::row, OutputKind::rowwise, Pass::forward},
          {"dx", Role::row, OutputKind::rowwise, Pass::backward, "x"},
          {"dweight", Role::column, OutputKind::all_rows_sum, Pass::backward, "w"},
          {"dshift", Role::table, OutputKind::segment_sum, Pass::backward, "shift"},
          {"dscale", Role::table, OutputKind::segment_sum, Pass::backward, "scale"},
      },
      // eps is added to a row's mean square: drawn near it as well as at the
      // usual settings (nn.RMSNorm's default is finfo.eps; diffusers uses 1e-6).
      {{"eps", 1e-6, /*positive=*/true, {1e-6, 1e-5, 1.1920929e-07}, "x"}},
      /*min_dim_with_rows=*/1,
      // Its own hazards: a row reduction that absorbs small squares, rows of
      // zeros (rstd = 1/sqrt(eps)), squares that overflow fp32.
      {"binade_span", "zero_rows", "huge"},
      // RL-Kernel's operator report (h3_rmsnorm): S = 4097, 32768 and 131072 rows.
      /*prior_art_rows=*/{4097, 32768, 131072},
      /*prior_art_operator_report=*/true,
      // Its plain part is RMSNorm, which RL-Kernel's report compares with
      // nn.RMSNorm (F.rms_norm) bit for bit. shift is -0, not +0: n + (+0)
      // turns a -0 n into +0, where n + (-0) is n for every n.
      /*plain=*/
      {"plain_bitwise_vs_nn_rmsnorm",
       "rms_norm",
       "torch.nn.functional.rms_norm (nn.RMSNorm)",
       {{"shift", -0.0}, {"scale", 0.0}},
       "out",
       {"x", "w"},
       {"eps"},
       "shift = -0 and scale = +0 make out = rnd(rnd(n * rnd(1 + 0)) + (-0)) = n exactly: 1 + 0 is 1, n * 1 is n, "
       "and n + (-0) is n for every n, -0 and Inf included, whether n was rounded to the dtype or kept in fp32; "
       "it holds where subnormals are not flushed to zero, and a NaN n stays a NaN whose payload may change "
       "(so any NaN matches any NaN)"},
  };
  return s;
}

}  // namespace gatecheck
