// Bug class: low-precision accumulator. grad_gate's running sums are kept in
// bf16 (rounded after every addition) instead of fp32, whatever the dtype, as
// a kernel that accumulates in the storage type of a bf16 model would.
// Caught by: accuracy on grad_gate (fp32 and fp16 at once; bf16 on segments
// long enough for the rounding errors to add up past the fp32-sum bound).
#include "grad_gate_sums.h"
#include "mutant_abi.h"
#include "mutants.h"

namespace gatecheck::mutants {
namespace {

float accumulate_in_bf16(float acc, float term) {
  return to_float(round_to<bf16_t>(gate_residual_accumulate(acc, term)));
}

struct Bf16Accumulator : HostTwin {
  static constexpr const char* kName = "mutant:bf16-accumulator";
  static Status backward(const gatecheck_problem& p, const void* grad_out, const void* gate,
                         const int64_t* index, const void* y, void* grad_res, void* grad_gate,
                         void* grad_y) {
    return twin_backward_with_grad_gate(p, grad_out, gate, index, y, grad_res, grad_gate, grad_y,
                                        [](const std::vector<float>& terms, const std::vector<int64_t>&, int64_t) {
                                          return tiled_sum(terms, accumulate_in_bf16);
                                        });
  }
};

}  // namespace

const gatecheck_plugin* bf16_accumulator_plugin() { return MutantAbi<Bf16Accumulator>::plugin(); }

}  // namespace gatecheck::mutants
