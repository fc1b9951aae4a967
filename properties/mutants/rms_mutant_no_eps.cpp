// Bug class: eps ignored. rstd = 1/sqrt(mean square), as if eps were 0:
// wrong wherever eps is not negligible next to a row's mean square, and
// inf/NaN on a row of zeros (where the op gives 0 * 1/sqrt(eps)).
// Caught by: accuracy (small rows, eps comparable to their mean square, or
// rows of zeros).
#include <cmath>

#include "mutants.h"
#include "rms_twin.h"

namespace gatecheck::mutants {
namespace {

struct NoEps : RmsHooks {
  static constexpr const char* kName = "mutant:rms-no-eps";
  static float rstd(float ss, int64_t dim, float /*eps: the bug*/) { return 1.0f / std::sqrt(ss / float(dim)); }
};

}  // namespace

const gatecheck_op_plugin* rms_no_eps_plugin() { return RmsMutantAbi<NoEps>::plugin(); }

}  // namespace gatecheck::mutants
