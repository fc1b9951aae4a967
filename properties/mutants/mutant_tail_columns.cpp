// Bug class: tail bug. The forward handles columns in vectors of 8; the
// scalar loop for the last dim % 8 columns forgets the gather and reads gate
// row 0 instead of gate row index[r]. Whole vectors are right.
// Caught by: accuracy (any dim not a multiple of 8, a row whose gate is not 0,
// and gate rows that differ).
#include "../../kernels/gate_residual_math.h"
#include "mutant_abi.h"
#include "mutants.h"

namespace gatecheck::mutants {
namespace {

constexpr int64_t kVector = 8;

struct TailColumns : HostTwin {
  static constexpr const char* kName = "mutant:tail-columns";
  static Status forward(const gatecheck_problem& p, const void* res, const void* gate,
                        const int64_t* index, const void* y, void* out) {
    Status s = HostTwin::forward(p, res, gate, index, y, out);
    if (!s.ok()) return s;
    dispatch_dtype(DType(p.dtype), [&](auto tag) {
      using T = decltype(tag);
      auto* o = static_cast<T*>(out);
      auto* r = static_cast<const T*>(res);
      auto* g = static_cast<const T*>(gate);
      auto* v = static_cast<const T*>(y);
      for (int64_t i = 0; i < p.rows; ++i)
        for (int64_t j = p.dim - p.dim % kVector; j < p.dim; ++j)  // the tail
          o[i * p.dim + j] = gate_residual_out(r[i * p.dim + j], g[j] /* bug: row 0 */, v[i * p.dim + j]);
    });
    return Status::success();
  }
};

}  // namespace

const gatecheck_plugin* tail_columns_plugin() { return MutantAbi<TailColumns>::plugin(); }

}  // namespace gatecheck::mutants
