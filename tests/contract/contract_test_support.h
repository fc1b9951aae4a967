// Buffers for one gate_residual call whose outputs start as a sentinel, so a
// test can tell that a rejected call wrote nothing.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/host/gate_residual_host.h"

namespace gatecheck::testing {

constexpr uint8_t kSentinel = 0xA5;

struct CallBuffers {
  gatecheck_problem p;
  std::vector<uint8_t> res, gate, y, out, grad_out, grad_res, grad_gate, grad_y;
  std::vector<int64_t> index;

  // Valid f32 buffers for [rows, dim] with `gates` gates and index r % gates;
  // sizes are taken as at least 0 so negative shapes can be tried.
  CallBuffers(int64_t rows, int64_t dim, int64_t gates, DType t = DType::f32)
      : p{rows, dim, gates, int32_t(t), GATECHECK_CPU, nullptr} {
    const size_t es = size_t(dtype_size(t));
    const size_t n = size_t(rows > 0 && dim > 0 ? rows * dim : 0) * es;
    const size_t g = size_t(gates > 0 && dim > 0 ? gates * dim : 0) * es;
    res.assign(n, 0x3c);
    y.assign(n, 0x3c);
    grad_out.assign(n, 0x3c);
    gate.assign(g, 0x3c);
    out.assign(n, kSentinel);
    grad_res.assign(n, kSentinel);
    grad_y.assign(n, kSentinel);
    grad_gate.assign(g, kSentinel);
    for (int64_t r = 0; r < (rows > 0 ? rows : 0); ++r) index.push_back(gates > 0 ? r % gates : 0);
  }

  static void* ptr(std::vector<uint8_t>& v) { return v.empty() ? nullptr : v.data(); }
  Status fwd() { return gate_residual_fwd_host(p, ptr(res), ptr(gate), index.empty() ? nullptr : index.data(), ptr(y), ptr(out)); }
  Status bwd() {
    return gate_residual_bwd_host(p, ptr(grad_out), ptr(gate), index.empty() ? nullptr : index.data(), ptr(y),
                                  ptr(grad_res), ptr(grad_gate), ptr(grad_y));
  }
  static bool untouched(const std::vector<uint8_t>& v) {
    for (uint8_t b : v)
      if (b != kSentinel) return false;
    return true;
  }
  bool nothing_written() const {
    return untouched(out) && untouched(grad_res) && untouched(grad_gate) && untouched(grad_y);
  }
};

}  // namespace gatecheck::testing
