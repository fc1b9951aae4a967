#include "broken_impls.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kernels/gate_residual_dtype.h"
#include "kernels/host/gate_residual_host.h"

namespace gatecheck::testing {

namespace {

const gatecheck_plugin& host() { return *gate_residual_host_plugin(); }
int64_t numel(int64_t r, int64_t c) { return r > 0 && c > 0 ? r * c : 0; }
int esize(const gatecheck_problem* p) { return p->dtype == GATECHECK_F32 ? 4 : 2; }

void flip_bit(void* base, int64_t i, const gatecheck_problem* p, uint32_t bit) {
  if (esize(p) == 4) {
    static_cast<uint32_t*>(base)[i] ^= bit;
  } else {
    static_cast<uint16_t*>(base)[i] ^= uint16_t(bit);
  }
}
// A high mantissa bit: changes a normal value by 25% or more of its size.
uint32_t big_bit(const gatecheck_problem* p) { return esize(p) == 4 ? 0x00400000u : p->dtype == GATECHECK_F16 ? 0x0200u : 0x0040u; }

// Dies the way an unchecked kernel does on a wild index: a write to an unmapped page.
[[noreturn]] void die() {
  volatile int* wild = nullptr;
  *wild = 1;
  std::abort();
}

template <Bug B>
int fwd(const gatecheck_problem* p, const void* res, const void* gate, const int64_t* index, const void* y, void* out) {
  if (B == Bug::crashes_always) die();
  if (B == Bug::crashes_on_bad_index && p && index)
    for (int64_t r = 0; r < p->rows; ++r)
      if (index[r] < 0 || index[r] >= p->gates) die();
  if (B == Bug::accepts_bad_index && p && p->rows > 0 && p->gates > 0 && index) {
    std::vector<int64_t> clamped(index, index + p->rows);
    for (auto& k : clamped) k = k < 0 ? 0 : k >= p->gates ? p->gates - 1 : k;
    return host().forward(p, res, gate, clamped.data(), y, out);
  }
  if (B == Bug::fused_forward && p && p->dtype == GATECHECK_F32) {
    const int rc = host().forward(p, res, gate, index, y, out);  // validation and the layout
    if (rc) return rc;
    auto* o = static_cast<float*>(out);
    for (int64_t r = 0; r < p->rows; ++r)
      for (int64_t j = 0; j < p->dim; ++j) {
        const int64_t i = r * p->dim + j;
        o[i] = std::fma(static_cast<const float*>(gate)[index[r] * p->dim + j], static_cast<const float*>(y)[i],
                        static_cast<const float*>(res)[i]);
      }
    return 0;
  }
  if (B == Bug::fused_forward && p && p->dtype != GATECHECK_F32) {
    const int rc = host().forward(p, res, gate, index, y, out);
    if (rc) return rc;
    const DType t = DType(p->dtype);
    auto get = [t](const void* b, int64_t i) { return bits_to_float(t, static_cast<const uint16_t*>(b)[i]); };
    for (int64_t r = 0; r < p->rows; ++r)
      for (int64_t j = 0; j < p->dim; ++j) {
        const int64_t i = r * p->dim + j;
        const float v = std::fma(get(gate, index[r] * p->dim + j), get(y, i), get(res, i));
        static_cast<uint16_t*>(out)[i] = uint16_t(float_to_bits_rn(t, v));
      }
    return 0;
  }
  const int rc = host().forward(p, res, gate, index, y, out);
  if (rc) return rc;
  const int64_t n = numel(p->rows, p->dim);
  if (B == Bug::out_off_by_much && n > 0) flip_bit(out, n - 1, p, big_bit(p));
  if (B == Bug::odd_batch_flip && n > 0 && p->rows % 2 == 1) flip_bit(out, 0, p, 1);
  if (B == Bug::writes_past_out) std::memset(static_cast<char*>(out) + n * esize(p), 0, size_t(esize(p)));
  return 0;
}

template <Bug B>
int bwd(const gatecheck_problem* p, const void* grad_out, const void* gate, const int64_t* index, const void* y,
        void* grad_res, void* grad_gate, void* grad_y) {
  if (B == Bug::accepts_bad_index && p && p->rows > 0 && p->gates > 0 && index) {
    std::vector<int64_t> clamped(index, index + p->rows);
    for (auto& k : clamped) k = k < 0 ? 0 : k >= p->gates ? p->gates - 1 : k;
    return host().backward(p, grad_out, gate, clamped.data(), y, grad_res, grad_gate, grad_y);
  }
  if (B == Bug::skips_last_grad_y && p && p->rows > 0 && p->dim > 0) {
    const int64_t n = numel(p->rows, p->dim);
    std::vector<char> tmp(size_t(n * esize(p)));
    const int rc = host().backward(p, grad_out, gate, index, y, grad_res, grad_gate, tmp.data());
    if (rc) return rc;
    std::memcpy(grad_y, tmp.data(), size_t((n - 1) * esize(p)));  // the last element is never stored
    return 0;
  }
  const int rc = host().backward(p, grad_out, gate, index, y, grad_res, grad_gate, grad_y);
  if (rc) return rc;
  const int64_t ng = numel(p->gates, p->dim);
  static int calls = 0;
  if (B == Bug::small_batch_grad_gate && ng > 0 && p->rows < 3) flip_bit(grad_gate, 0, p, 1);
  if (B == Bug::flaky_grad_gate && ng > 0 && (calls++ % 2 == 1)) flip_bit(grad_gate, 0, p, 1);
  if (B == Bug::writes_y && numel(p->rows, p->dim) > 0) flip_bit(const_cast<void*>(y), 0, p, 1);
  return 0;
}

const char* vague_error() { return "invalid argument"; }
template <Bug B>
const char* last_error() {
  return B == Bug::vague_errors ? vague_error() : host().last_error();
}

template <Bug B>
const gatecheck_plugin* plugin() {
  static const gatecheck_plugin p = {GATECHECK_ABI_VERSION, bug_name(B), 1u << GATECHECK_CPU,
                                     fwd<B>, bwd<B>, last_error<B>};
  return &p;
}

}  // namespace

const char* bug_name(Bug bug) {
  switch (bug) {
    case Bug::out_off_by_much: return "out_off_by_much";
    case Bug::odd_batch_flip: return "odd_batch_flip";
    case Bug::small_batch_grad_gate: return "small_batch_grad_gate";
    case Bug::flaky_grad_gate: return "flaky_grad_gate";
    case Bug::writes_y: return "writes_y";
    case Bug::skips_last_grad_y: return "skips_last_grad_y";
    case Bug::writes_past_out: return "writes_past_out";
    case Bug::accepts_bad_index: return "accepts_bad_index";
    case Bug::vague_errors: return "vague_errors";
    case Bug::fused_forward: return "fused_forward";
    case Bug::crashes_on_bad_index: return "crashes_on_bad_index";
    case Bug::crashes_always: return "crashes_always";
  }
  return "?";
}

Subject broken(Bug bug) {
  Subject impl;
  impl.name = std::string("broken:") + bug_name(bug);
  impl.device = Device::cpu;
  impl.contract = Contract::everything();
  impl.contract.claims.push_back("eager_exact");
  switch (bug) {
    case Bug::out_off_by_much: impl.api = plugin<Bug::out_off_by_much>(); break;
    case Bug::odd_batch_flip: impl.api = plugin<Bug::odd_batch_flip>(); break;
    case Bug::small_batch_grad_gate: impl.api = plugin<Bug::small_batch_grad_gate>(); break;
    case Bug::flaky_grad_gate: impl.api = plugin<Bug::flaky_grad_gate>(); break;
    case Bug::writes_y: impl.api = plugin<Bug::writes_y>(); break;
    case Bug::skips_last_grad_y: impl.api = plugin<Bug::skips_last_grad_y>(); break;
    case Bug::writes_past_out: impl.api = plugin<Bug::writes_past_out>(); break;
    case Bug::accepts_bad_index: impl.api = plugin<Bug::accepts_bad_index>(); break;
    case Bug::vague_errors: impl.api = plugin<Bug::vague_errors>(); break;
    case Bug::fused_forward: impl.api = plugin<Bug::fused_forward>(); break;
    case Bug::crashes_on_bad_index: impl.api = plugin<Bug::crashes_on_bad_index>(); break;
    case Bug::crashes_always: impl.api = plugin<Bug::crashes_always>(); break;
  }
  return impl;
}

}  // namespace gatecheck::testing
