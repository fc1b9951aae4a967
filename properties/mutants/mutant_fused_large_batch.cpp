// Bug class: batch-size-dependent fused path. Batches of 64 rows or more take
// a "fast" forward that fuses the multiply-add (one rounding, fused_forward.h);
// smaller batches take the host twin's two-rounding path. Each path alone is
// accurate, but a row's `out` now depends on how many rows share its batch.
// Caught by: row_invariance (a row alone vs. in a batch of >= 64).
#include "fused_forward.h"
#include "mutant_abi.h"
#include "mutants.h"

namespace gatecheck::mutants {
namespace {

constexpr int64_t kFusedFromRows = 64;

struct FusedLargeBatch : HostTwin {
  static constexpr const char* kName = "mutant:fused-large-batch";
  static Status forward(const gatecheck_problem& p, const void* res, const void* gate,
                        const int64_t* index, const void* y, void* out) {
    if (p.rows < kFusedFromRows) return HostTwin::forward(p, res, gate, index, y, out);
    return fused_forward(p, res, gate, index, y, out);
  }
};

}  // namespace

const gatecheck_plugin* fused_large_batch_plugin() { return MutantAbi<FusedLargeBatch>::plugin(); }

}  // namespace gatecheck::mutants
