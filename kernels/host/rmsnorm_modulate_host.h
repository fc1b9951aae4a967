// rmsnorm_modulate's host twin: the op in plain C++ on the CPU, through the
// plugin ABI v2, with one fixed order for every reduction (see the .cpp).
#pragma once

#include "../gatecheck_plugin_v2.h"
#include "../op_schema.h"

namespace gatecheck {

const gatecheck_op_plugin* rmsnorm_modulate_host_plugin();

// The twin's row-local pieces, shared with its reproducible mode
// (rmsnorm_modulate_repro_host.h) so that both compute the same fp32 values.
// Built once a call (it finds the tensors by name), used for every element.
// An element's factors of its terms: the reproducible mode adds the terms,
// each rounded; the twin's fp32 sums fuse their last product with the add.
struct RmsColumnTerms {
  float dx_product, g, n;  // d*x, g, n = rnd(w * (rstd * x))
  float dweight(float rstd) const { return dx_product * rstd; }
  float dshift() const { return g; }
  float dscale() const { return g * n; }
};
class RmsHostTerms {
 public:
  // c: a checked backward call (check_call), read while this object lives.
  explicit RmsHostTerms(const OpCall& c);
  // Row r's rstd, its sum of squares in the order's partials and trees.
  float row_rstd(int64_t r) const;
  // Element (r, j)'s terms of the parameter gradients in fp32: dweight's
  // d*x*rstd, dshift's g, dscale's g*n.
  RmsColumnTerms column_terms(int64_t r, int64_t j, float rstd) const;
  // The same with the call's dtype T named (float, f16_t or bf16_t): no
  // branch on it an element. Defined for the twin's own file.
  template <class T>
  RmsColumnTerms column_terms_of(int64_t r, int64_t j, float rstd) const;

 private:
  const OpCall& c_;
  const TensorBuf &x_, &w_, &scale_, &g_;
  const int64_t* index_;
  float eps_;
};

}  // namespace gatecheck
