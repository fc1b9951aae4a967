// Bug class: tail bug. The sum of squares reads a row in vectors of 4 and
// forgets the scalar loop for the last dim % 4 columns: their squares are
// missing from the mean (a row narrower than 4 has mean square 0).
// Caught by: accuracy (any dim not a multiple of 4 whose tail is not
// negligible next to the rest of the row).
#include "mutants.h"
#include "rms_twin.h"

namespace gatecheck::mutants {
namespace {

constexpr int64_t kVector = 4;

struct TailColumns : RmsHooks {
  static constexpr const char* kName = "mutant:rms-tail-columns";
  static float sum_squares(const std::vector<float>& x, DType, int64_t) {
    const int64_t body = int64_t(x.size()) - int64_t(x.size()) % kVector;  // the bug: no tail loop
    float ss = 0.0f;
    for (int64_t j = 0; j < body; ++j) ss += x[size_t(j)] * x[size_t(j)];
    return ss;
  }
};

}  // namespace

const gatecheck_op_plugin* rms_tail_columns_plugin() { return RmsMutantAbi<TailColumns>::plugin(); }

}  // namespace gatecheck::mutants
