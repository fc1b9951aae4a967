// Bug class: special-value shortcut (flush to zero). grad_y results that are
// subnormal in the dtype are flushed to a zero of the same sign, as a kernel
// built with flush-to-zero would produce.
// Caught by: accuracy on grad_y (subnormal value class: g * gate subnormal).
#include <cmath>

#include "mutant_abi.h"
#include "mutants.h"

namespace gatecheck::mutants {
namespace {

// The smallest normal value of each dtype.
template <class T> float min_normal();
template <> float min_normal<float>() { return 1.17549435e-38f; }
template <> float min_normal<bf16_t>() { return 1.17549435e-38f; }
template <> float min_normal<f16_t>() { return 6.103515625e-05f; }

struct SubnormalFlush : HostTwin {
  static constexpr const char* kName = "mutant:subnormal-flush";
  static Status backward(const gatecheck_problem& p, const void* grad_out, const void* gate,
                         const int64_t* index, const void* y, void* grad_res, void* grad_gate,
                         void* grad_y) {
    Status s = HostTwin::backward(p, grad_out, gate, index, y, grad_res, grad_gate, grad_y);
    if (!s.ok()) return s;
    dispatch_dtype(DType(p.dtype), [&](auto tag) {
      using T = decltype(tag);
      auto* gy = static_cast<T*>(grad_y);
      for (int64_t i = 0; i < p.rows * p.dim; ++i) {
        const float v = to_float(gy[i]);
        if (v != 0.0f && std::fabs(v) < min_normal<T>())  // the bug: FTZ
          gy[i] = round_to<T>(std::copysign(0.0f, v));
      }
    });
    return Status::success();
  }
};

}  // namespace

const gatecheck_plugin* subnormal_flush_plugin() { return MutantAbi<SubnormalFlush>::plugin(); }

}  // namespace gatecheck::mutants
