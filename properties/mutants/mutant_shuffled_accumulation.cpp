// Bug class: order-shuffled accumulation. The order in which a gate's rows are
// summed depends on a call counter (forward on even calls, reversed on odd
// ones), as with a reduction whose order follows scheduling rather than the
// data. Accurate every time, but grad_gate is not bit-identical from run to
// run: any two consecutive calls differ wherever a gate has 3 or more rows and
// the order matters after rounding.
// Caught by: repeatable (and segment_invariance, whose two runs differ too).
#include <atomic>

#include "grad_gate_sums.h"
#include "mutant_abi.h"
#include "mutants.h"

namespace gatecheck::mutants {
namespace {

std::atomic<uint64_t> g_calls{0};

struct ShuffledAccumulation : HostTwin {
  static constexpr const char* kName = "mutant:shuffled-accumulation";
  static Status backward(const gatecheck_problem& p, const void* grad_out, const void* gate,
                         const int64_t* index, const void* y, void* grad_res, void* grad_gate,
                         void* grad_y) {
    // Count only calls the twin accepts (its validation is check_bwd_args).
    const bool valid = check_bwd_args(p, grad_out, gate, index, y, grad_res, grad_gate, grad_y, kCpuOnly,
                                      /*index_on_host=*/true)
                           .ok();
    const uint64_t call = valid ? g_calls.fetch_add(1) : 0;
    return twin_backward_with_grad_gate(
        p, grad_out, gate, index, y, grad_res, grad_gate, grad_y,
        [&](std::vector<float> terms, const std::vector<int64_t>&, int64_t) {
          if (call % 2 == 1) std::reverse(terms.begin(), terms.end());  // the bug: order from a counter
          return tiled_sum(terms, gate_residual_accumulate);
        });
  }
};

}  // namespace

const gatecheck_plugin* shuffled_accumulation_plugin() { return MutantAbi<ShuffledAccumulation>::plugin(); }

}  // namespace gatecheck::mutants
