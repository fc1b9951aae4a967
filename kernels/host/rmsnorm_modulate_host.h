// rmsnorm_modulate's host twin: the op in plain C++ on the CPU, through the
// plugin ABI v2, with one fixed order for every reduction (see the .cpp).
#pragma once

#include "../gatecheck_plugin_v2.h"
#include "../op_schema.h"

namespace gatecheck {

const gatecheck_op_plugin* rmsnorm_modulate_host_plugin();

// The twin's row-local pieces, shared with its reproducible mode
// (rmsnorm_modulate_repro_host.h) so that both compute the same fp32 values.
// c: a checked backward call (check_call).
// Row r's rstd, its sum of squares in the order's partials and trees.
float rmsnorm_modulate_host_row_rstd(const OpCall& c, int64_t r);
// Element (r, j)'s terms of the parameter gradients, in fp32 as the twin sums
// them: dweight's d*x*rstd, dshift's g, dscale's g*n.
struct RmsColumnTerms {
  float dweight, dshift, dscale;
};
RmsColumnTerms rmsnorm_modulate_host_column_terms(const OpCall& c, int64_t r, int64_t j, float rstd);

}  // namespace gatecheck
