// CORRECT alternative (must never be flagged): grad_gate summed in a different
// but valid order: within each tile of a gate's own rows, pairwise (recursive
// halving) instead of sequentially; tile partials folded in tile order from +0
// (so an all -0 sum is +0, as for a sum that starts from a zeroed buffer).
// The order depends only on the gate's own rows in row order, so it is still
// repeatable and segment-invariant; it is within the oracle's any-order fp32
// bound; it is not bitwise equal to the host twin, which nothing claims.
#include "grad_gate_sums.h"
#include "mutant_abi.h"
#include "mutants.h"

namespace gatecheck::mutants {
namespace {

float pairwise(const float* t, size_t n) {
  if (n == 1) return t[0];
  const size_t h = n / 2;
  return gate_residual_accumulate(pairwise(t, h), pairwise(t + h, n - h));
}

struct PairwiseGradGate : HostTwin {
  static constexpr const char* kName = "alt:pairwise-grad-gate";
  static Status backward(const gatecheck_problem& p, const void* grad_out, const void* gate,
                         const int64_t* index, const void* y, void* grad_res, void* grad_gate,
                         void* grad_y) {
    return twin_backward_with_grad_gate(
        p, grad_out, gate, index, y, grad_res, grad_gate, grad_y,
        [](const std::vector<float>& terms, const std::vector<int64_t>&, int64_t) {
          float total = 0.0f;
          for (size_t t0 = 0; t0 < terms.size(); t0 += size_t(kGradGateTileRows)) {
            const size_t n = std::min(terms.size() - t0, size_t(kGradGateTileRows));
            total = gate_residual_accumulate(total, pairwise(terms.data() + t0, n));
          }
          return total;
        });
  }
};

}  // namespace

const gatecheck_plugin* pairwise_grad_gate_plugin() { return MutantAbi<PairwiseGradGate>::plugin(); }

}  // namespace gatecheck::mutants
