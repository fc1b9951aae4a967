// Bug class: special-value shortcut. The forward skips the multiply when
// y == 0 and returns res, assuming gate * 0 == 0. That is wrong for a NaN or
// infinite gate (NaN * 0 and Inf * 0 are NaN) and for signed zeros
// (-0 + gate*(+0) is +0 when gate > 0, not -0).
// Caught by: accuracy, on special values (NaN/Inf gate, or res = -0 with y = +0).
#include "mutant_abi.h"
#include "mutants.h"

namespace gatecheck::mutants {
namespace {

struct ZeroYShortcut : HostTwin {
  static constexpr const char* kName = "mutant:zero-y-shortcut";
  static Status forward(const gatecheck_problem& p, const void* res, const void* gate,
                        const int64_t* index, const void* y, void* out) {
    Status s = HostTwin::forward(p, res, gate, index, y, out);
    if (!s.ok()) return s;
    dispatch_dtype(DType(p.dtype), [&](auto tag) {
      using T = decltype(tag);
      auto* o = static_cast<T*>(out);
      auto* r = static_cast<const T*>(res);
      auto* v = static_cast<const T*>(y);
      for (int64_t i = 0; i < p.rows * p.dim; ++i)
        if (to_float(v[i]) == 0.0f) o[i] = r[i];  // the bug: "gate * 0 is 0"
    });
    return Status::success();
  }
};

}  // namespace

const gatecheck_plugin* zero_y_shortcut_plugin() { return MutantAbi<ZeroYShortcut>::plugin(); }

}  // namespace gatecheck::mutants
