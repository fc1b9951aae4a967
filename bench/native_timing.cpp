#include "native_timing.h"

#include <stdexcept>

#include "../kernels/cuda/gate_residual_cuda.h"
#include "bench_device.h"
#if GATECHECK_BENCH_TORCH
#include "torch_eager_bench.h"
#endif

namespace gatecheck {
namespace bench {

namespace {

void must(const Status& s, const char* what) {
  if (!s.ok()) throw std::runtime_error(std::string(what) + " during timing: " + s.message);
}

// A buffer of a call by its name in the op.
void* tensor(const OpCall& call, const char* name) {
  if (const int i = call.op->input_index(name); i >= 0) return call.inputs[size_t(i)].data;
  return call.outputs[size_t(call.op->output_index(name))].data;
}

}  // namespace

NativeTiming time_native_gpu(const std::string& impl, const OpCall& f, const OpCall& b, const Warmup& warm,
                             int reps) {
  NativeTiming t;
  if (f.op != &gate_residual_schema() || (impl != "cuda" && impl != "torch-eager")) return t;
  t.known = true;
  const gatecheck_problem p = f.p;
  auto in = [&](const char* name) { return tensor(b, name); };
  const auto* index = static_cast<const int64_t*>(in("index"));
  if (impl == "cuda") {
    auto kf = [&](int) {
      must(gate_residual_fwd_cuda(p, in("res"), in("gate"), index, in("y"), tensor(f, "out")), "forward");
    };
    auto kfb = [&](int i) {
      kf(i);
      must(gate_residual_bwd_cuda(p, in("grad_out"), in("gate"), index, in("y"), in("grad_res"), in("grad_gate"),
                                  in("grad_y")),
           "backward");
    };
    t.fwd_us = median_us(kf, warm, reps, Queue::Held);
    t.fwd_bwd_us = median_us(kfb, warm, reps, Queue::Held);
    t.method =
        "the kernels' entry points (gate_residual_fwd_cuda, gate_residual_bwd_cuda; not the plugin ABI's stream "
        "synchronise), runs queued behind a hold kernel, as gatecheck bench";
    return t;
  }
#if GATECHECK_BENCH_TORCH
  const EagerResult er = time_torch_eager(int(p.dtype), p.rows, p.dim, p.gates,
                                          {EagerSet{in("res"), in("gate"), index, in("y"), in("grad_out")}}, warm,
                                          reps, tensor(f, "out"), in("grad_y"), in("grad_gate"));
  torch_release_cache();
  if (er.ok) {
    t.fwd_us = er.fwd_us;
    t.fwd_bwd_us = er.fwd_bwd_us;
    t.method =
        "LibTorch's ops on the device (res + gate.index_select(0, index) * y, autograd), without the plugin "
        "adapter's synchronise and index check, runs queued behind a hold kernel, as gatecheck bench's eager";
  } else {
    t.method = std::string("not measured: ") + er.error;
  }
#else
  t.method = "not measured: this build's LibTorch has no CUDA";
#endif
  return t;
}

}  // namespace bench
}  // namespace gatecheck
