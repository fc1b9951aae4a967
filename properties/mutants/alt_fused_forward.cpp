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
    return fused_forward(p, res, gate, index, y, out);
  }
};

}  // namespace

const gatecheck_plugin* fused_forward_plugin() { return MutantAbi<FusedForward>::plugin(); }

}  // namespace gatecheck::mutants
