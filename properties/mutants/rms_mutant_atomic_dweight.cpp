// Bug class: dweight folded with atomics. Each row's term d*x*rstd is added
// to dweight as it arrives, and the arrival order follows scheduling, not
// the data. Here the order is drawn from a call counter (the rows rotated by
// a different amount on each call), so that the bug is reproducible: every
// order is accurate, but dweight is not bit-identical from run to run.
// Caught by: repeatable (any two calls with 3 or more rows where the order
// changes a rounding).
#include <atomic>

#include "mutants.h"
#include "rms_twin.h"

namespace gatecheck::mutants {
namespace {

std::atomic<uint64_t> g_calls{0};

struct AtomicDweight : RmsHooks {
  static constexpr const char* kName = "mutant:rms-atomic-dweight";
  static void fold_dweight(const std::vector<float>& terms, int64_t rows, int64_t dim, std::vector<float>* dw) {
    if (rows == 0) return;
    const int64_t first = int64_t(g_calls.fetch_add(1) % uint64_t(rows));  // the bug: the order of arrival
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t r = (first + i) % rows;
      for (int64_t j = 0; j < dim; ++j) (*dw)[size_t(j)] += terms[size_t(r * dim + j)];
    }
  }
};

}  // namespace

const gatecheck_op_plugin* rms_atomic_dweight_plugin() { return RmsMutantAbi<AtomicDweight>::plugin(); }

}  // namespace gatecheck::mutants
