// Host twin of the CUDA kernels. grad_gate uses the reduction order the CUDA
// backward uses: for each gate, its rows taken in row order, cut into tiles of
// kGradGateTileRows rows; each tile is summed sequentially in fp32 from +0,
// the tile partials are folded in tile order into a total that also starts at
// +0, then rounded once. (A sum that starts at +0 is never -0, so folding from
// +0 equals starting from the first partial.)
#include "gate_residual_host.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "../gate_residual_dtype.h"
#include "../gate_residual_math.h"
#include "../plugin_adapter.h"

namespace gatecheck {

namespace {

constexpr uint32_t kHostDevices = 1u << GATECHECK_CPU;

template <class T>
void fwd_typed(const gatecheck_problem& p, const T* res, const T* gate, const int64_t* index,
               const T* y, T* out) {
  for (int64_t r = 0; r < p.rows; ++r) {
    const T* g = gate + index[r] * p.dim;
    const int64_t o = r * p.dim;
    for (int64_t j = 0; j < p.dim; ++j) out[o + j] = gate_residual_out(res[o + j], g[j], y[o + j]);
  }
}

template <class T>
void bwd_typed(const gatecheck_problem& p, const T* grad_out, const T* gate, const int64_t* index,
               const T* y, T* grad_res, T* grad_gate, T* grad_y) {
  const int64_t n = p.rows * p.dim;
  if (n > 0) std::memcpy(grad_res, grad_out, size_t(n) * sizeof(T));
  for (int64_t r = 0; r < p.rows; ++r) {
    const T* g = gate + index[r] * p.dim;
    const int64_t o = r * p.dim;
    for (int64_t j = 0; j < p.dim; ++j) grad_y[o + j] = gate_residual_grad_y(grad_out[o + j], g[j]);
  }
  // Rows of each gate in row order (a stable counting sort).
  std::vector<int64_t> start(size_t(p.gates) + 1, 0), order(size_t(p.rows));
  for (int64_t r = 0; r < p.rows; ++r) ++start[size_t(index[r]) + 1];
  for (int64_t k = 0; k < p.gates; ++k) start[size_t(k) + 1] += start[size_t(k)];
  std::vector<int64_t> fill(start.begin(), start.end() - 1);
  for (int64_t r = 0; r < p.rows; ++r) order[size_t(fill[size_t(index[r])]++)] = r;

  std::vector<float> total(size_t(p.dim)), partial(size_t(p.dim));
  for (int64_t k = 0; k < p.gates; ++k) {
    const int64_t b = start[size_t(k)], e = start[size_t(k) + 1];
    std::fill(total.begin(), total.end(), 0.0f);
    for (int64_t t0 = b; t0 < e; t0 += kGradGateTileRows) {
      const int64_t t1 = std::min(e, t0 + kGradGateTileRows);
      std::fill(partial.begin(), partial.end(), 0.0f);
      for (int64_t i = t0; i < t1; ++i) {
        const int64_t o = order[size_t(i)] * p.dim;
        for (int64_t j = 0; j < p.dim; ++j)
          partial[size_t(j)] = gate_residual_accumulate(
              partial[size_t(j)], gate_residual_grad_gate_term(grad_out[o + j], y[o + j]));
      }
      for (int64_t j = 0; j < p.dim; ++j)
        total[size_t(j)] = gate_residual_accumulate(total[size_t(j)], partial[size_t(j)]);
    }
    for (int64_t j = 0; j < p.dim; ++j)
      grad_gate[k * p.dim + j] = gate_residual_grad_gate_finish<T>(total[size_t(j)]);
  }
}

using Abi = PluginAdapter<struct HostTag>;

int abi_forward(const gatecheck_problem* p, const void* res, const void* gate, const int64_t* index,
                const void* y, void* out) {
  if (!p) return Abi::null_problem("gate_residual_fwd");
  return Abi::report(gate_residual_fwd_host(*p, res, gate, index, y, out));
}
int abi_backward(const gatecheck_problem* p, const void* grad_out, const void* gate,
                 const int64_t* index, const void* y, void* grad_res, void* grad_gate,
                 void* grad_y) {
  if (!p) return Abi::null_problem("gate_residual_bwd");
  return Abi::report(gate_residual_bwd_host(*p, grad_out, gate, index, y, grad_res, grad_gate, grad_y));
}

}  // namespace

Status gate_residual_fwd_host(const gatecheck_problem& p, const void* res, const void* gate,
                              const int64_t* index, const void* y, void* out) {
  Status s = check_fwd_args(p, res, gate, index, y, out, kHostDevices, /*index_on_host=*/true);
  if (!s.ok()) return s;
  dispatch_dtype(DType(p.dtype), [&](auto tag) {
    using T = decltype(tag);
    fwd_typed<T>(p, static_cast<const T*>(res), static_cast<const T*>(gate), index,
                 static_cast<const T*>(y), static_cast<T*>(out));
  });
  return Status::success();
}

Status gate_residual_bwd_host(const gatecheck_problem& p, const void* grad_out, const void* gate,
                              const int64_t* index, const void* y, void* grad_res,
                              void* grad_gate, void* grad_y) {
  Status s = check_bwd_args(p, grad_out, gate, index, y, grad_res, grad_gate, grad_y, kHostDevices,
                            /*index_on_host=*/true);
  if (!s.ok()) return s;
  dispatch_dtype(DType(p.dtype), [&](auto tag) {
    using T = decltype(tag);
    bwd_typed<T>(p, static_cast<const T*>(grad_out), static_cast<const T*>(gate), index,
                 static_cast<const T*>(y), static_cast<T*>(grad_res), static_cast<T*>(grad_gate),
                 static_cast<T*>(grad_y));
  });
  return Status::success();
}

const gatecheck_plugin* gate_residual_host_plugin() {
  static const gatecheck_plugin plugin = {GATECHECK_ABI_VERSION, "host", kHostDevices,
                                          abi_forward, abi_backward, Abi::last_error};
  return &plugin;
}

}  // namespace gatecheck
