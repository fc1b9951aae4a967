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
    Status s = check_fwd_args(p, res, gate, index, y, out, kCpuOnly, /*index_on_host=*/true);
    if (!s.ok()) return s;
    with_dtype(DType(p.dtype), [&](auto tag) {
      using T = decltype(tag);
      auto* o = static_cast<T*>(out);
      auto* r = static_cast<const T*>(res);
      auto* g = static_cast<const T*>(gate);
      auto* v = static_cast<const T*>(y);
      for (int64_t i = 0; i < p.rows; ++i)
        for (int64_t j = 0; j < p.dim; ++j)
          o[i * p.dim + j] = fused_out(r[i * p.dim + j], g[index[i] * p.dim + j], v[i * p.dim + j]);
    });
    return Status::success();
  }
};

}  // namespace

const gatecheck_plugin* fused_large_batch_plugin() { return MutantAbi<FusedLargeBatch>::plugin(); }

}  // namespace gatecheck::mutants
