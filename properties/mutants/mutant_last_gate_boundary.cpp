// Bug class: boundary bug. The segment of the LAST gate (gate == gates-1) is
// taken to end one row early (an off-by-one on the final segment's end, as
// when the end offset of gate k is read from offsets[k+1] and the last one is
// mis-initialised), so that gate's grad_gate misses its last row.
// Caught by: accuracy on grad_gate (the last gate used, its last row non-zero).
#include "grad_gate_sums.h"
#include "mutant_abi.h"
#include "mutants.h"

namespace gatecheck::mutants {
namespace {

struct LastGateBoundary : HostTwin {
  static constexpr const char* kName = "mutant:last-gate-boundary";
  static Status backward(const gatecheck_problem& p, const void* grad_out, const void* gate,
                         const int64_t* index, const void* y, void* grad_res, void* grad_gate,
                         void* grad_y) {
    return twin_backward_with_grad_gate(
        p, grad_out, gate, index, y, grad_res, grad_gate, grad_y,
        [&](std::vector<float> terms, const std::vector<int64_t>&, int64_t k) {
          if (k == p.gates - 1 && !terms.empty()) terms.pop_back();  // the bug
          return tiled_sum(terms, gate_residual_accumulate);
        });
  }
};

}  // namespace

const gatecheck_plugin* last_gate_boundary_plugin() { return MutantAbi<LastGateBoundary>::plugin(); }

}  // namespace gatecheck::mutants
