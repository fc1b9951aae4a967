#include "sweep_timing.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <vector>

#include "../bench/bench_device.h"
#include "../bench/native_timing.h"

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
struct Timed {
  CallTiming* t;
  double bytes;
};
// The figures of l to fill with their bytes: fwd, fwd_bwd, and bwd where measured.
std::vector<Timed> timed(Latency* l, const Bytes& b) {
  std::vector<Timed> v{{&l->fwd, b.fwd}, {&l->fwd_bwd, b.fwd_bwd}};
  if (l->bwd) v.push_back({&*l->bwd, b.fwd_bwd - b.fwd});
  return v;
}
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

Latency time_on_cpu(BatchRunner& r, const SweepGrid& g) {
  const Implementation& impl = r.impl();
  auto fwd = [&] { must(impl.call(r.full_call(Pass::forward)), "forward"); };
  auto bwd = [&] { must(impl.call(r.full_call(Pass::backward)), "backward"); };
  const Bytes b = call_bytes(r.cas());
  auto none = [] {};
  Latency l;
  l.fwd.wall_us = wall_median_us(fwd, none, g.warmup, g.reps);
  l.fwd_bwd.wall_us = wall_median_us([&] { fwd(); bwd(); }, none, g.warmup, g.reps);
  if (g.op->prior_art_operator_report) {  // its backward alone
    l.bwd = CallTiming{};
    l.bwd->wall_us = wall_median_us(bwd, none, g.warmup, g.reps);
  }
  for (auto [t, bytes] : timed(&l, b)) {
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
  auto fwd = [&](int) { must(impl.call(f), "forward"); };
  auto bwd = [&](int) { must(impl.call(b), "backward"); };
  auto fwd_bwd = [&](int i) {
    fwd(i);
    bwd(i);
  };
  const bench::Warmup warm{g.warmup, 0.0};
  auto sync = [] { cuda_ok(cudaDeviceSynchronize(), "synchronise after a timed call"); };
  Latency l;
  l.fwd.event_us = bench::median_us(fwd, warm, g.reps, bench::Queue::Free);
  l.fwd_bwd.event_us = bench::median_us(fwd_bwd, warm, g.reps, bench::Queue::Free);
  l.fwd.wall_us = wall_median_us([&] { fwd(0); }, sync, g.warmup, g.reps);
  l.fwd_bwd.wall_us = wall_median_us([&] { fwd_bwd(0); }, sync, g.warmup, g.reps);
  if (g.op->prior_art_operator_report) {  // its backward alone
    l.bwd = CallTiming{};
    l.bwd->event_us = bench::median_us(bwd, warm, g.reps, bench::Queue::Free);
    l.bwd->wall_us = wall_median_us([&] { bwd(0); }, sync, g.warmup, g.reps);
  }

  // GPU time only: the implementation's own entry points where bench/ knows
  // them, else its ABI call where nothing in it waits on the GPU.
  const bench::NativeTiming native = bench::time_native_gpu(impl.name, f, b, warm, g.reps);
  if (native.known) {
    l.fwd.gpu_us = native.fwd_us;
    l.fwd_bwd.gpu_us = native.fwd_bwd_us;
    l.fwd.gpu_method = l.fwd_bwd.gpu_method = native.method;
  } else if (abi_call_can_be_held(fwd_bwd)) {
    l.fwd.gpu_us = bench::median_us(fwd, warm, g.reps, bench::Queue::Held);
    l.fwd_bwd.gpu_us = bench::median_us(fwd_bwd, warm, g.reps, bench::Queue::Held);
    if (l.bwd) l.bwd->gpu_us = bench::median_us(bwd, warm, g.reps, bench::Queue::Held);
    l.fwd.gpu_method = l.fwd_bwd.gpu_method = "its ABI call, runs queued behind a hold kernel, as gatecheck bench";
  } else {
    l.fwd.gpu_method = l.fwd_bwd.gpu_method =
        "not separable: the call waits for the GPU inside (a device or stream synchronise), so runs cannot be "
        "queued ahead of it; see event_us and wall_us";
  }
  if (l.bwd) l.bwd->gpu_method = l.fwd.gpu_method;

  // A device-to-device copy of the same bytes, timed the same three ways.
  for (auto [t, bytes] : timed(&l, call_bytes(c))) {
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
