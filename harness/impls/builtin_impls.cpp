// The built-in implementations of each op (implementation.h), and the
// registry an op defined elsewhere adds its own to.
#include <map>
#include <mutex>
#include <stdexcept>

#include "../../kernels/cuda/gate_residual_cuda.h"
#include "../../kernels/cuda/rmsnorm_modulate_cuda.h"
#include "../../kernels/cuda/gate_residual_repro_cuda.h"
#include "../../kernels/cuda/rmsnorm_modulate_repro_cuda.h"
#include "../../kernels/host/gate_residual_host.h"
#include "../../kernels/host/gate_residual_repro_host.h"
#include "../../kernels/host/rmsnorm_modulate_host.h"
#include "../../kernels/host/rmsnorm_modulate_repro_host.h"
#include "../../kernels/rmsnorm_modulate.h"
#include "implementation.h"
#if GATECHECK_HAVE_TORCH
#include "../../kernels/torch/rmsnorm_modulate_torch_eager.h"
#include "../../kernels/torch/torch_eager.h"
#endif

namespace gatecheck {

namespace {

constexpr uint32_t kCpu = 1u << int(Device::cpu), kCuda = 1u << int(Device::cuda);

void need_cuda(const char* what) {
  if (!cuda_available())
    throw std::runtime_error(std::string("implementation '") + what + "': no CUDA device is available on this machine");
}

Implementation gate_residual_host(Device) {
  Implementation impl;
  impl.api = gate_residual_host_plugin();
  impl.thread_safe = true;  // no state between calls; last_error() is per thread
  return impl;
}

// The reproducible mode: grad_gate a binned sum (kernels/binned_sum.h: within the
// oracle's bound, not correctly rounded in general), the same whatever the split of the batch.
Implementation gate_residual_host_repro(Device) {
  Implementation impl;
  impl.api = gate_residual_repro_host_plugin();
  impl.exchange = gate_residual_repro_host_exchange();
  impl.thread_safe = true;  // no state between calls; last_error() is per thread
  impl.declared_claims = "default, split_invariance";
  return impl;
}

Implementation gate_residual_cuda_repro(Device) {
  need_cuda("cuda-repro");
  Implementation impl;
  impl.api = gate_residual_repro_cuda_plugin();
  impl.exchange = gate_residual_repro_cuda_exchange();
  impl.thread_safe = true;  // no state between calls; last_error() is per thread
  impl.calls_on_problem_stream = true;
  impl.declared_claims = "default, split_invariance";
  return impl;
}

Implementation rmsnorm_modulate_host(Device) {
  Implementation impl;
  impl.api2 = rmsnorm_modulate_host_plugin();
  impl.thread_safe = true;  // no state between calls; last_error() is per thread
  return impl;
}

// The reproducible mode: out and dx the twin's bits; dweight, dshift and
// dscale binned sums of the twin's fp32 terms (kernels/binned_sum.h: within
// the oracle's bound, not correctly rounded in general), the same whatever
// the split of the batch.
Implementation rmsnorm_modulate_host_repro(Device) {
  Implementation impl;
  impl.api2 = rmsnorm_modulate_repro_host_plugin();
  impl.exchange = rmsnorm_modulate_repro_host_exchange();
  impl.thread_safe = true;  // no state between calls; last_error() is per thread
  impl.declared_claims = "default, split_invariance";
  return impl;
}

// The reproducible mode on CUDA: out and dx the cuda kernels' bits; dweight,
// dshift and dscale host-repro's (the same state words and bits).
Implementation rmsnorm_modulate_cuda_repro(Device) {
  need_cuda("cuda-repro");
  Implementation impl;
  impl.api2 = rmsnorm_modulate_repro_cuda_plugin();
  impl.exchange = rmsnorm_modulate_repro_cuda_exchange();
  impl.thread_safe = true;  // scratch from the stream's pool per call; last_error() is per thread
  impl.calls_on_problem_stream = true;
  impl.declared_claims = "default, split_invariance";
  return impl;
}

Implementation gate_residual_cuda(Device) {
  need_cuda("cuda");
  Implementation impl;
  impl.api = gate_residual_cuda_plugin();
  impl.thread_safe = true;  // per-stream workspaces under a lock; last_error() is per thread
  impl.calls_on_problem_stream = true;
  return impl;
}

Implementation rmsnorm_modulate_cuda(Device) {
  need_cuda("cuda");
  Implementation impl;
  impl.api2 = rmsnorm_modulate_cuda_plugin();
  impl.thread_safe = true;  // scratch from the stream's pool per call; last_error() is per thread
  impl.calls_on_problem_stream = true;
  return impl;
}

#if GATECHECK_HAVE_TORCH
// torch eager's documented weaknesses on this op, as its contract: what
// gatecheck finds there is a finding, not a failure.
std::string torch_eager_gate_residual_claims(Device d) {
  std::string c = "default; not accuracy:grad_gate for bf16,f16 (index_add accumulates in the dtype)";
  if (d == Device::cpu)
    // Found by gatecheck (tests/properties/torch_finding_test.cpp): a bf16
    // NaN result's bits depend on whether the row fell in the vectorised
    // body or the scalar tail of LibTorch's CPU loop, i.e. on its place in
    // the batch (0xffff vs 0x7fc0). f16 and f32 held over 300 NaN cases each.
    c += "; not row_invariance:out for bf16 (NaN bits depend on the row's place in the batch)"
         "; not row_invariance:grad_y for bf16 (NaN bits depend on the row's place in the batch)";
  else
    c += "; not repeatable (index_add uses atomics); not segment_invariance (atomics order a gate's rows by timing)";
  return c;
}
#endif

Implementation gate_residual_torch_eager(Device d) {
#if GATECHECK_HAVE_TORCH
  if (d == Device::cuda && !cuda_available())
    throw std::runtime_error("implementation 'torch-eager' on cuda: no CUDA device is available");
  Implementation impl;
  impl.api = torch_eager_plugin(d);
  if (!impl.api)
    throw std::runtime_error(std::string("implementation 'torch-eager': this LibTorch cannot run on ") +
                             device_name(d));
  // LibTorch's eager ops and autograd may be called from several threads
  // (each call builds its own tensors and graph); last_error() is per
  // thread. Its intra-op threads: prepare_parallel_calls.
  impl.thread_safe = true;
  impl.declared_claims = torch_eager_gate_residual_claims(d);
  return impl;
#else
  (void)d;
  throw std::runtime_error("implementation 'torch-eager': this gatecheck was built without LibTorch");
#endif
}

#if GATECHECK_HAVE_TORCH
// torch eager's weaknesses on rmsnorm_modulate, as its contract (found by
// gatecheck: docs/rmsnorm_modulate.md).
std::string torch_eager_rmsnorm_modulate_claims(Device d) {
  // Autograd rounds d = g * (1 + scale) to the dtype (mul's backward runs in
  // it) before dx and dweight use it; index_select's backward, index_add_,
  // sums dshift and dscale in the dtype. f32 held over 1,300 cases.
  std::string c =
      "default; not accuracy:dx for bf16,f16 (autograd rounds g*(1+scale) to the dtype)"
      "; not accuracy:dweight for bf16,f16 (autograd rounds g*(1+scale) to the dtype)"
      "; not accuracy:dshift for bf16,f16 (index_add accumulates in the dtype)"
      "; not accuracy:dscale for bf16,f16 (index_add accumulates in the dtype)";
  if (d == Device::cpu)
    // A NaN result's bits (0x7fc00000 vs 0xffc00000) depend on whether its
    // element fell in the vectorised body or the scalar tail of LibTorch's
    // CPU loop, i.e. on the row's place in the batch: every dtype.
    c += "; not row_invariance (NaN bits depend on the row's place in the batch)";
  else
    // index_add_ adds with atomics on CUDA: the order of a segment's rows
    // follows timing (the reference report: eager's backward is not repeatable).
    // Seen on the H200 (bench/results/rmsnorm_cuda/eager-check.txt): dx of a
    // row differs by an ulp with the batch around it (CUDA's reduction kernels
    // pick their plan by the batch's shape), and an f32 dshift of a subnormal
    // gradient came back 0 (index_add flushes it).
    c += "; not repeatable:dshift (index_add uses atomics); not repeatable:dscale (index_add uses atomics)"
         "; not segment_invariance (atomics order a segment's rows by timing)"
         "; not row_invariance (CUDA's reductions follow the batch's shape)"
         "; not accuracy:dshift for f32 (index_add flushes subnormal sums)"
         "; not accuracy:dscale for f32 (index_add flushes subnormal sums)";
  return c;
}
#endif

Implementation rmsnorm_modulate_torch_eager(Device d) {
#if GATECHECK_HAVE_TORCH
  if (d == Device::cuda && !cuda_available())
    throw std::runtime_error("implementation 'torch-eager' on cuda: no CUDA device is available");
  Implementation impl;
  impl.api2 = rmsnorm_modulate_torch_eager_plugin(d);
  if (!impl.api2)
    throw std::runtime_error(std::string("implementation 'torch-eager': this LibTorch cannot run on ") +
                             device_name(d));
  impl.thread_safe = true;  // as gate_residual's: each call its own tensors and graph
  impl.declared_claims = torch_eager_rmsnorm_modulate_claims(d);
  return impl;
#else
  (void)d;
  throw std::runtime_error("implementation 'torch-eager': this gatecheck was built without LibTorch");
#endif
}

std::mutex& lock() {
  static std::mutex m;
  return m;
}

std::map<const OpSchema*, std::vector<BuiltinImplementation>>& registry() {
  static std::map<const OpSchema*, std::vector<BuiltinImplementation>> r = {
      {&gate_residual_schema(),
       {{"host", kCpu, gate_residual_host},
        {"cuda", kCuda, gate_residual_cuda},
        {"torch-eager", kCpu | kCuda, gate_residual_torch_eager},
        {"host-repro", kCpu, gate_residual_host_repro},
        {"cuda-repro", kCuda, gate_residual_cuda_repro}}},
      {&rmsnorm_modulate_schema(),
       {{"host", kCpu, rmsnorm_modulate_host},
        {"host-repro", kCpu, rmsnorm_modulate_host_repro},
        {"cuda", kCuda, rmsnorm_modulate_cuda},
        {"torch-eager", kCpu | kCuda, rmsnorm_modulate_torch_eager},
        {"cuda-repro", kCuda, rmsnorm_modulate_cuda_repro}}},
  };
  return r;
}

}  // namespace

bool register_builtin_implementation(const OpSchema& op, const BuiltinImplementation& b) {
  const std::lock_guard<std::mutex> l(lock());
  auto& v = registry()[&op];
  for (const auto& e : v)
    if (std::string(e.name) == b.name) return false;
  v.push_back(b);
  return true;
}

std::vector<BuiltinImplementation> builtin_implementations(const OpSchema& op) {
  const std::lock_guard<std::mutex> l(lock());
  auto it = registry().find(&op);
  return it == registry().end() ? std::vector<BuiltinImplementation>{} : it->second;
}

}  // namespace gatecheck
