// Bug class: low-precision statistics. The sum of squares is kept in the
// dtype (each square and each partial sum rounded to bf16 or f16) instead
// of fp32. Exact for f32 calls; for 16-bit ones the mean square loses up to
// dim roundings of 2^-8 (bf16), outside the oracle's fp32 bound for out and
// dx (tests/oracle/rmsnorm_modulate_bounds_test.cpp shows the bound failing
// for such a reduction).
// Caught by: accuracy (bf16 or f16, a row of several columns).
#include "mutants.h"
#include "rms_twin.h"

namespace gatecheck::mutants {
namespace {

struct DtypeStatistics : RmsHooks {
  static constexpr const char* kName = "mutant:rms-dtype-statistics";
  static float sum_squares(const std::vector<float>& x, DType d, int64_t) {
    float ss = 0.0f;
    for (float v : x) ss = rms_twin::rn(d, ss + rms_twin::rn(d, v * v));  // the bug: the dtype's precision
    return ss;
  }
};

}  // namespace

const gatecheck_op_plugin* rms_dtype_statistics_plugin() { return RmsMutantAbi<DtypeStatistics>::plugin(); }

}  // namespace gatecheck::mutants
