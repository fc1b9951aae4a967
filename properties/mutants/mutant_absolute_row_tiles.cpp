// Bug class: partition-dependent reduction. grad_gate is summed in tiles cut
// at ABSOLUTE row positions (every 16 rows of the batch, as a kernel that
// gives each thread block 16 rows would), instead of tiles counted within the
// gate's own rows. The grouping of a gate's terms, and so the rounding of its
// sum, then depends on where its rows sit in the batch.
// Caught by: segment_invariance (the gate's rows at other offsets in a sub-batch).
#include "grad_gate_sums.h"
#include "mutant_abi.h"
#include "mutants.h"

namespace gatecheck::mutants {
namespace {

constexpr int64_t kBlockRows = 16;

struct AbsoluteRowTiles : HostTwin {
  static constexpr const char* kName = "mutant:absolute-row-tiles";
  static Status backward(const gatecheck_problem& p, const void* grad_out, const void* gate,
                         const int64_t* index, const void* y, void* grad_res, void* grad_gate,
                         void* grad_y) {
    return twin_backward_with_grad_gate(
        p, grad_out, gate, index, y, grad_res, grad_gate, grad_y,
        [](const std::vector<float>& terms, const std::vector<int64_t>& rows, int64_t) {
          float total = 0.0f, partial = 0.0f;
          for (size_t i = 0; i < rows.size(); ++i) {
            if (i > 0 && rows[i] / kBlockRows != rows[i - 1] / kBlockRows) {  // the bug: absolute blocks
              total = gate_residual_accumulate(total, partial);
              partial = 0.0f;
            }
            partial = gate_residual_accumulate(partial, terms[i]);
          }
          return gate_residual_accumulate(total, partial);
        });
  }
};

}  // namespace

const gatecheck_plugin* absolute_row_tiles_plugin() { return MutantAbi<AbsoluteRowTiles>::plugin(); }

}  // namespace gatecheck::mutants
