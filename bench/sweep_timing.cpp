#include "sweep_timing.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <vector>

#include "../kernels/cuda/gate_residual_cuda.h"
#include "bench_device.h"
#if GATECHECK_BENCH_TORCH
#include "torch_eager_bench.h"
#endif

namespace gatecheck {

namespace {

using bench::cuda_ok;

void must(const Status& s, const char* what) {
  if (!s.ok()) throw std::runtime_error(std::string(what) + " during timing: " + s.message);
}

// Median host time of `reps` runs after `warmup`, each ended by `settle`
// (a device synchronise on the GPU) inside the timed span.
double wall_median_us(const std::function<void()>& run, const std::function<void()>& settle, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i) run();
  settle();
  std::vector<double> t(static_cast<size_t>(reps));
  for (auto& x : t) {
    const auto a = std::chrono::steady_clock::now();
    run();
    settle();
    x = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count();
  }
  std::nth_element(t.begin(), t.begin() + reps / 2, t.end());
  return t[size_t(reps / 2)];
}

struct Bytes {
  double fwd, fwd_bwd;
};
Bytes call_bytes(const Case& c) {
  const double e = double(dtype_size(c.dtype)), nd = double(c.rows) * double(c.dim), gd = double(c.gates) * double(c.dim);
  const double fwd = e * (3 * nd + gd) + 8.0 * double(c.rows);
  const double bwd = e * (4 * nd + 2 * gd) + 8.0 * double(c.rows);
  return {fwd, fwd + bwd};
}

Latency time_on_cpu(BatchRunner& r, const SweepGrid& g) {
  const Implementation& impl = r.impl();
  const gatecheck_problem p = r.full_problem();
  auto fwd = [&] { must(impl.forward(p, r.res(), r.gate(), r.index(), r.y(), r.full_out(Tensor::out)), "forward"); };
  auto bwd = [&] {
    must(impl.backward(p, r.grad_out(), r.gate(), r.index(), r.y(), r.full_out(Tensor::grad_res),
                       r.full_out(Tensor::grad_gate), r.full_out(Tensor::grad_y), r.res()),
         "backward");
  };
  const Bytes b = call_bytes(r.cas());
  auto none = [] {};
  Latency l;
  l.fwd.wall_us = wall_median_us(fwd, none, g.warmup, g.reps);
  l.fwd_bwd.wall_us = wall_median_us([&] { fwd(); bwd(); }, none, g.warmup, g.reps);
  for (auto [t, bytes] : {std::pair<CallTiming*, double>{&l.fwd, b.fwd}, {&l.fwd_bwd, b.fwd_bwd}}) {
    t->bytes = bytes;
    const size_t half = size_t(bytes / 2);  // a copy of half the bytes reads and writes them all
    std::vector<char> src(half, 1), dst(half);
    t->copy_wall_us = wall_median_us([&] { std::memcpy(dst.data(), src.data(), half); }, none, g.warmup, g.reps);
    t->gpu_method = "cpu: wall-clock only";
  }
  return l;
}

// GPU time of the implementation's ABI call where nothing in it waits on the
// GPU: one held run first tells (a wait inside the call lets the hold time out).
bool abi_call_can_be_held(const std::function<void(int)>& run) {
  const int before = bench::hold_timeouts();
  bench::median_us(run, bench::Warmup{0, 0.0}, 1, bench::Queue::Held);
  return bench::hold_timeouts() == before;
}

Latency time_on_cuda(BatchRunner& r, const SweepGrid& g) {
  const Implementation& impl = r.impl();
  const Case& c = r.cas();
  const gatecheck_problem p = r.full_problem();
  auto fwd = [&](int) { must(impl.forward(p, r.res(), r.gate(), r.index(), r.y(), r.full_out(Tensor::out)), "forward"); };
  auto fwd_bwd = [&](int i) {
    fwd(i);
    must(impl.backward(p, r.grad_out(), r.gate(), r.index(), r.y(), r.full_out(Tensor::grad_res),
                       r.full_out(Tensor::grad_gate), r.full_out(Tensor::grad_y), r.res()),
         "backward");
  };
  const bench::Warmup warm{g.warmup, 0.0};
  auto sync = [] { cuda_ok(cudaDeviceSynchronize(), "synchronise after a timed call"); };
  Latency l;
  l.fwd.event_us = bench::median_us(fwd, warm, g.reps, bench::Queue::Free);
  l.fwd_bwd.event_us = bench::median_us(fwd_bwd, warm, g.reps, bench::Queue::Free);
  l.fwd.wall_us = wall_median_us([&] { fwd(0); }, sync, g.warmup, g.reps);
  l.fwd_bwd.wall_us = wall_median_us([&] { fwd_bwd(0); }, sync, g.warmup, g.reps);

  // GPU time only.
  if (impl.name == "cuda") {
    auto kf = [&](int) {
      must(gate_residual_fwd_cuda(p, r.res(), r.gate(), r.index(), r.y(), r.full_out(Tensor::out)), "forward");
    };
    auto kfb = [&](int i) {
      kf(i);
      must(gate_residual_bwd_cuda(p, r.grad_out(), r.gate(), r.index(), r.y(), r.full_out(Tensor::grad_res),
                                  r.full_out(Tensor::grad_gate), r.full_out(Tensor::grad_y)),
           "backward");
    };
    l.fwd.gpu_us = bench::median_us(kf, warm, g.reps, bench::Queue::Held);
    l.fwd_bwd.gpu_us = bench::median_us(kfb, warm, g.reps, bench::Queue::Held);
    l.fwd.gpu_method = l.fwd_bwd.gpu_method =
        "the kernels' entry points (gate_residual_fwd_cuda, gate_residual_bwd_cuda; not the plugin ABI's stream "
        "synchronise), runs queued behind a hold kernel, as gatecheck bench";
  } else if (impl.name == "torch-eager") {
#if GATECHECK_BENCH_TORCH
    const bench::EagerResult er = bench::time_torch_eager(
        int(c.dtype), c.rows, c.dim, c.gates,
        {bench::EagerSet{const_cast<void*>(r.res()), const_cast<void*>(r.gate()), r.index(), const_cast<void*>(r.y()),
                         const_cast<void*>(r.grad_out())}},
        warm, g.reps, r.full(Tensor::out), r.full(Tensor::grad_y), r.full(Tensor::grad_gate));
    bench::torch_release_cache();
    if (er.ok) {
      l.fwd.gpu_us = er.fwd_us;
      l.fwd_bwd.gpu_us = er.fwd_bwd_us;
      l.fwd.gpu_method = l.fwd_bwd.gpu_method =
          "LibTorch's ops on the device (res + gate.index_select(0, index) * y, autograd), without the plugin "
          "adapter's synchronise and index check, runs queued behind a hold kernel, as gatecheck bench's eager";
    } else {
      l.fwd.gpu_method = l.fwd_bwd.gpu_method = std::string("not measured: ") + er.error;
    }
#else
    l.fwd.gpu_method = l.fwd_bwd.gpu_method = "not measured: this build's LibTorch has no CUDA";
#endif
  } else if (abi_call_can_be_held(fwd_bwd)) {
    l.fwd.gpu_us = bench::median_us(fwd, warm, g.reps, bench::Queue::Held);
    l.fwd_bwd.gpu_us = bench::median_us(fwd_bwd, warm, g.reps, bench::Queue::Held);
    l.fwd.gpu_method = l.fwd_bwd.gpu_method = "its ABI call, runs queued behind a hold kernel, as gatecheck bench";
  } else {
    l.fwd.gpu_method = l.fwd_bwd.gpu_method =
        "not separable: the call waits for the GPU inside (a device or stream synchronise), so runs cannot be "
        "queued ahead of it; see event_us and wall_us";
  }

  // A device-to-device copy of the same bytes, timed the same three ways.
  const Bytes b = call_bytes(c);
  for (auto [t, bytes] : {std::pair<CallTiming*, double>{&l.fwd, b.fwd}, {&l.fwd_bwd, b.fwd_bwd}}) {
    t->bytes = bytes;
    const size_t half = size_t(bytes / 2);
    t->copy_gpu_us = bench::copy_time_us(half, warm, g.reps);
    DeviceBytes src(Device::cuda, half), dst(Device::cuda, half);
    src.fill(1);
    auto copy = [&](int) { cuda_ok(cudaMemcpyAsync(dst.get(), src.get(), half, cudaMemcpyDeviceToDevice, 0), "copy"); };
    t->copy_event_us = bench::median_us(copy, warm, g.reps, bench::Queue::Free);
    t->copy_wall_us = wall_median_us([&] { copy(0); }, sync, g.warmup, g.reps);
  }
  return l;
}

}  // namespace

Latency time_sweep_calls(BatchRunner& r, const SweepGrid& g) {
  return r.impl().device == Device::cuda ? time_on_cuda(r, g) : time_on_cpu(r, g);
}

}  // namespace gatecheck
