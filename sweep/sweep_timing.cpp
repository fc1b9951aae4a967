#include "sweep_timing.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <vector>

#include "../kernels/cuda/gate_residual_cuda.h"
#include "../bench/bench_device.h"
#if GATECHECK_BENCH_TORCH
#include "../bench/torch_eager_bench.h"
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
// The fewest bytes a call of `pass` moves: each tensor it reads, once, and
// each it writes.
double pass_bytes(const Case& c, Pass pass) {
  const OpCall call = OpCall::shaped(*c.op, pass, c.problem(Device::cpu));
  const double e = double(dtype_size(c.dtype));
  double b = 0;
  for (size_t i = 0; i < call.inputs.size(); ++i)
    if (call.reads(i))
      b += double(call.inputs[i].rows) * double(call.inputs[i].cols) * (c.op->inputs[i].role == Role::index ? 8.0 : e);
  for (size_t i = 0; i < call.outputs.size(); ++i)
    if (call.makes(i)) b += double(call.outputs[i].rows) * double(call.outputs[i].cols) * e;
  return b;
}
Bytes call_bytes(const Case& c) {
  const double fwd = pass_bytes(c, Pass::forward);
  return {fwd, fwd + pass_bytes(c, Pass::backward)};
}

// A buffer of the full case's call by its name in the op (gate_residual's
// kernels and eager bench take them by position).
void* tensor(const OpCall& call, const char* name) {
  if (const int i = call.op->input_index(name); i >= 0) return call.inputs[size_t(i)].data;
  return call.outputs[size_t(call.op->output_index(name))].data;
}

Latency time_on_cpu(BatchRunner& r, const SweepGrid& g) {
  const Implementation& impl = r.impl();
  auto fwd = [&] { must(impl.call(r.full_call(Pass::forward)), "forward"); };
  auto bwd = [&] { must(impl.call(r.full_call(Pass::backward)), "backward"); };
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
  const OpCall& f = r.full_call(Pass::forward);
  const OpCall& b = r.full_call(Pass::backward);
  const gatecheck_problem p = f.p;
  auto fwd = [&](int) { must(impl.call(f), "forward"); };
  auto fwd_bwd = [&](int i) {
    fwd(i);
    must(impl.call(b), "backward");
  };
  // gate_residual's own kernels and eager bench take its tensors by position.
  const bool gate_residual = c.op == &gate_residual_schema();
  auto in = [&](const char* name) { return tensor(b, name); };
  const auto* index = static_cast<const int64_t*>(in("index"));
  const bench::Warmup warm{g.warmup, 0.0};
  auto sync = [] { cuda_ok(cudaDeviceSynchronize(), "synchronise after a timed call"); };
  Latency l;
  l.fwd.event_us = bench::median_us(fwd, warm, g.reps, bench::Queue::Free);
  l.fwd_bwd.event_us = bench::median_us(fwd_bwd, warm, g.reps, bench::Queue::Free);
  l.fwd.wall_us = wall_median_us([&] { fwd(0); }, sync, g.warmup, g.reps);
  l.fwd_bwd.wall_us = wall_median_us([&] { fwd_bwd(0); }, sync, g.warmup, g.reps);

  // GPU time only.
  if (gate_residual && impl.name == "cuda") {
    auto kf = [&](int) {
      must(gate_residual_fwd_cuda(p, in("res"), in("gate"), index, in("y"), tensor(f, "out")), "forward");
    };
    auto kfb = [&](int i) {
      kf(i);
      must(gate_residual_bwd_cuda(p, in("grad_out"), in("gate"), index, in("y"), in("grad_res"), in("grad_gate"),
                                  in("grad_y")),
           "backward");
    };
    l.fwd.gpu_us = bench::median_us(kf, warm, g.reps, bench::Queue::Held);
    l.fwd_bwd.gpu_us = bench::median_us(kfb, warm, g.reps, bench::Queue::Held);
    l.fwd.gpu_method = l.fwd_bwd.gpu_method =
        "the kernels' entry points (gate_residual_fwd_cuda, gate_residual_bwd_cuda; not the plugin ABI's stream "
        "synchronise), runs queued behind a hold kernel, as gatecheck bench";
  } else if (gate_residual && impl.name == "torch-eager") {
#if GATECHECK_BENCH_TORCH
    const bench::EagerResult er = bench::time_torch_eager(
        int(c.dtype), c.rows, c.dim, c.gates, {bench::EagerSet{in("res"), in("gate"), index, in("y"), in("grad_out")}},
        warm, g.reps, tensor(f, "out"), in("grad_y"), in("grad_gate"));
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
  const Bytes moved = call_bytes(c);
  for (auto [t, bytes] : {std::pair<CallTiming*, double>{&l.fwd, moved.fwd}, {&l.fwd_bwd, moved.fwd_bwd}}) {
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
