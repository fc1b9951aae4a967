// Bug class: batch-dependent row reduction (the classic batch-variance bug).
// A row's sum of squares is split into pieces whose count depends on the
// batch's row count, as a kernel that splits the reduction of small batches
// to keep the device busy: 8 / rows pieces (at least one), their partial sums
// added in order. Every split is accurate; a row's out and dx change bits
// with the size of the batch it is called in.
// Caught by: row_invariance (a row alone or in a small sub-batch against the
// whole batch, where the split changes a rounding).
#include <algorithm>

#include "mutants.h"
#include "rms_twin.h"

namespace gatecheck::mutants {
namespace {

struct BatchSplit : RmsHooks {
  static constexpr const char* kName = "mutant:rms-batch-split";
  static float sum_squares(const std::vector<float>& x, DType, int64_t rows) {
    const int64_t dim = int64_t(x.size());
    const int64_t pieces = std::min(dim, std::max<int64_t>(1, 8 / std::max<int64_t>(rows, 1)));  // the bug
    const int64_t width = (dim + pieces - 1) / pieces;
    float total = 0.0f;
    for (int64_t start = 0; start < dim; start += width) {
      float part = 0.0f;
      for (int64_t j = start; j < std::min(dim, start + width); ++j) part += x[size_t(j)] * x[size_t(j)];
      total += part;
    }
    return total;
  }
};

}  // namespace

const gatecheck_op_plugin* rms_batch_split_plugin() { return RmsMutantAbi<BatchSplit>::plugin(); }

}  // namespace gatecheck::mutants
