// A planted bug for the fuzzer to find: a "fast path" for batches of at least
// kFusedRows rows that computes out = res + gate*y with one rounding instead of
// two. Each result is accurate, but a row's bits now depend on the batch it
// is in, which breaks row_invariance. Batches that big are absent from the
// seed corpus, so finding it needs the fuzzer to grow a case.
#include <cstring>

#include "kernels/gatecheck_plugin.h"
#include "kernels/host/gate_residual_host.h"

using namespace gatecheck;

namespace {

constexpr int64_t kFusedRows = 48;

uint32_t load(const void* p, int64_t i, DType t) {
  uint32_t b = 0;
  std::memcpy(&b, static_cast<const uint8_t*>(p) + i * dtype_size(t), size_t(dtype_size(t)));
  return b;
}
void store(void* p, int64_t i, DType t, uint32_t b) {
  std::memcpy(static_cast<uint8_t*>(p) + i * dtype_size(t), &b, size_t(dtype_size(t)));
}

int forward(const gatecheck_problem* p, const void* res, const void* gate, const int64_t* index,
            const void* y, void* out) {
  // The host plugin validates and computes; the fast path then overwrites.
  const gatecheck_plugin* host = gate_residual_host_plugin();
  const int rc = host->forward(p, res, gate, index, y, out);
  if (rc != 0 || p->rows < kFusedRows) return rc;
  const DType t = DType(p->dtype);
  for (int64_t r = 0; r < p->rows; ++r)
    for (int64_t j = 0; j < p->dim; ++j) {
      const int64_t i = r * p->dim + j;
      const double fused = double(bits_to_float(t, load(res, i, t))) +
                           double(bits_to_float(t, load(gate, index[r] * p->dim + j, t))) *
                               double(bits_to_float(t, load(y, i, t)));
      store(out, i, t, float_to_bits_rn(t, float(fused)));
    }
  return 0;
}

int backward(const gatecheck_problem* p, const void* grad_out, const void* gate, const int64_t* index,
             const void* y, void* grad_res, void* grad_gate, void* grad_y) {
  return gate_residual_host_plugin()->backward(p, grad_out, gate, index, y, grad_res, grad_gate, grad_y);
}

const char* last_error() { return gate_residual_host_plugin()->last_error(); }

}  // namespace

extern "C" const gatecheck_plugin* gatecheck_plugin_v1(void) {
  static const gatecheck_plugin plugin = {1, "planted-batch-fused", 1u << GATECHECK_CPU, forward, backward,
                                          last_error};
  return &plugin;
}
