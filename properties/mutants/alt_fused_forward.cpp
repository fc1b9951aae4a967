// CORRECT alternative (must never be flagged): a fused forward with one
// rounding (fused_forward.h) at every batch size. It is at least as accurate
// as eager's two roundings, row-invariant (each element depends only on its
// own inputs) and repeatable, but not eager-exact, which it does not claim.
#include "fused_forward.h"
#include "mutant_abi.h"
#include "mutants.h"

namespace gatecheck::mutants {
namespace {

struct FusedForward : HostTwin {
  static constexpr const char* kName = "alt:fused-forward";
  static Status forward(const gatecheck_problem& p, const void* res, const void* gate,
                        const int64_t* index, const void* y, void* out) {
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

const gatecheck_plugin* fused_forward_plugin() { return MutantAbi<FusedForward>::plugin(); }

}  // namespace gatecheck::mutants
