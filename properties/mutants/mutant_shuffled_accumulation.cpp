// Bug class: order-shuffled accumulation. Each backward call starts summing a
// gate's rows at a different row (rotated by a call counter), as an atomics-
// or work-stealing-based reduction would. Accurate every time, but grad_gate
// is not bit-identical from run to run.
// Caught by: repeatable (and segment_invariance).
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
    Status s = HostTwin::backward(p, grad_out, gate, index, y, grad_res, grad_gate, grad_y);
    if (!s.ok()) return s;
    const uint64_t call = g_calls.fetch_add(1);
    with_dtype(DType(p.dtype), [&](auto tag) {
      using T = decltype(tag);
      auto* go = static_cast<const T*>(grad_out);
      auto* v = static_cast<const T*>(y);
      write_grad_gate(p, index, static_cast<T*>(grad_gate), [&](const std::vector<int64_t>& rows, int64_t, int64_t j) {
        auto terms = gate_terms(p, go, v, rows, j);
        if (!terms.empty())  // the bug: the start row depends on the call
          std::rotate(terms.begin(), terms.begin() + long(call % terms.size()), terms.end());
        return tiled_sum(terms, gate_residual_accumulate);
      });
    });
    return Status::success();
  }
};

}  // namespace

const gatecheck_plugin* shuffled_accumulation_plugin() { return MutantAbi<ShuffledAccumulation>::plugin(); }

}  // namespace gatecheck::mutants
