// Bug class: unwritten unused gate. The backward writes grad_gate only for
// gates that some row uses (it launches one block per segment and never
// zero-fills the rest), so an unused gate's grad_gate is left as whatever the
// buffer held instead of 0.
// Caught by: full_write on grad_gate (any case with an unused gate, rows = 0 included).
#include <cstring>
#include <vector>

#include "mutant_abi.h"
#include "mutants.h"

namespace gatecheck::mutants {
namespace {

struct UnwrittenUnusedGate : HostTwin {
  static constexpr const char* kName = "mutant:unwritten-unused-gate";
  static Status backward(const gatecheck_problem& p, const void* grad_out, const void* gate,
                         const int64_t* index, const void* y, void* grad_res, void* grad_gate,
                         void* grad_y) {
    Status s = check_bwd_args(p, grad_out, gate, index, y, grad_res, grad_gate, grad_y, kCpuOnly,
                              /*index_on_host=*/true);
    if (!s.ok()) return s;
    const size_t row_bytes = size_t(p.dim) * size_t(dtype_size(DType(p.dtype)));
    std::vector<uint8_t> all(size_t(p.gates) * row_bytes);
    s = HostTwin::backward(p, grad_out, gate, index, y, grad_res, all.data(), grad_y);
    if (!s.ok()) return s;
    std::vector<bool> used(size_t(p.gates), false);
    for (int64_t r = 0; r < p.rows; ++r) used[size_t(index[r])] = true;
    for (int64_t k = 0; k < p.gates; ++k)
      if (used[size_t(k)] && row_bytes)  // the bug: unused gates are skipped, not zeroed
        std::memcpy(static_cast<uint8_t*>(grad_gate) + size_t(k) * row_bytes, all.data() + size_t(k) * row_bytes, row_bytes);
    return Status::success();
  }
};

}  // namespace

const gatecheck_plugin* unwritten_unused_gate_plugin() { return MutantAbi<UnwrittenUnusedGate>::plugin(); }

}  // namespace gatecheck::mutants
