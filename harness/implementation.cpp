#include "implementation.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <thread>

#include "../kernels/cuda/gate_residual_cuda.h"
#include "../kernels/host/gate_residual_host.h"
#include "plugin_call_lock.h"
#include "plugin_loader.h"
#include "plugin_stdout.h"
#if GATECHECK_HAVE_TORCH
#include "../kernels/torch/torch_eager.h"
#endif

namespace gatecheck {

namespace {
// Code that is not ours, sharing our stdout: plugins, and Python (print()).
bool is_plugin(const Implementation& impl) { return impl.name.rfind("plugin:", 0) == 0 || impl.tensors; }

Status from_rc(const Implementation& impl, const char* op, int rc) {
  if (rc == 0) return Status::success();
  const char* msg = impl.api->last_error ? impl.api->last_error() : nullptr;
  // Our own implementations return an ErrorKind. A plugin's codes mean
  // nothing to us (the ABI defines none): say the code and its message as they are.
  if (is_plugin(impl))
    return Status::error(ErrorKind::implementation, std::string(op) + " returned " + std::to_string(rc) +
                                                        (msg && *msg ? std::string(": ") + msg : " with no message"));
  std::string m = msg && *msg ? msg : std::string(op) + " returned " + std::to_string(rc) + " with no message";
  ErrorKind k = (rc > 0 && rc <= int(ErrorKind::implementation)) ? ErrorKind(rc) : ErrorKind::implementation;
  return Status::error(k, m);
}
}  // namespace

Status Implementation::forward(const gatecheck_problem& p, const void* res, const void* gate,
                               const int64_t* index, const void* y, void* out) const {
  const PluginCallLock lock(api, !thread_safe);         // through last_error() too
  const PluginStdoutToStderr quiet(is_plugin(*this));  // (and this)
  if (tensors) return tensors->forward(p, CallShapes::of(p), res, gate, index, y, out);
  return from_rc(*this, "forward", api->forward(&p, res, gate, index, y, out));
}

Status Implementation::backward(const gatecheck_problem& p, const void* grad_out, const void* gate,
                                const int64_t* index, const void* y, void* grad_res,
                                void* grad_gate, void* grad_y, const void* res) const {
  const PluginCallLock lock(api, !thread_safe);
  const PluginStdoutToStderr quiet(is_plugin(*this));
  if (tensors) return tensors->backward(p, CallShapes::of(p), grad_out, res, gate, index, y, grad_res, grad_gate, grad_y);
  return from_rc(*this, "backward",
                 api->backward(&p, grad_out, gate, index, y, grad_res, grad_gate, grad_y));
}

Status Implementation::forward_backward(const gatecheck_problem& p, const void* res, const void* gate,
                                        const int64_t* index, const void* y, void* out, const void* grad_out,
                                        void* grad_res, void* grad_gate, void* grad_y, bool* failed_in_forward) const {
  *failed_in_forward = true;
  if (!tensors)  // the C ABI has no such call: callers make two, with a wait between
    return Status::error(ErrorKind::implementation, "forward_backward: " + label() + " takes no tensors");
  const PluginCallLock lock(api, !thread_safe);
  const PluginStdoutToStderr quiet(true);
  return tensors->forward_backward(p, CallShapes::of(p), res, gate, index, y, out, grad_out, grad_res, grad_gate,
                                   grad_y, failed_in_forward);
}

uint32_t Implementation::devices() const {
  if (tensors) return (1u << GATECHECK_CPU) | (1u << GATECHECK_CUDA);
  return api ? api->devices : 0u;
}

CallShapes CallShapes::of(const gatecheck_problem& p) {
  const Extent rows_dim{p.rows, p.dim}, gates_dim{p.gates, p.dim};
  CallShapes s;
  s.res = s.y = s.grad_out = s.out = s.grad_res = s.grad_y = rows_dim;
  s.gate = s.grad_gate = gates_dim;
  s.index = p.rows;
  return s;
}

std::string without_traceback(const std::string& message) {
  return message.substr(0, message.find(kTracebackHeading));
}

namespace {
std::map<std::string, ImplementationMaker>& makers() {
  static std::map<std::string, ImplementationMaker> m;
  return m;
}
}  // namespace

void register_implementation_maker(const std::string& prefix, ImplementationMaker maker) {
  makers()[prefix] = maker;
}

bool cuda_available() {
  static const bool ok = [] {
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
  }();
  return ok;
}

Implementation make_implementation(const std::string& spec, Device device) {
  for (const auto& [prefix, maker] : makers())
    if (spec.rfind(prefix, 0) == 0) return maker(spec.substr(prefix.size()), device);
  if (spec.rfind("python:", 0) == 0)
    throw std::runtime_error("implementation '" + spec + "': this program was built without the Python door "
                             "(it needs Python 3 with torch, python3-dev and pybind11 at configure time)");
  if (spec.rfind("plugin:", 0) == 0) {
    if (device == Device::cuda && !cuda_available())
      throw std::runtime_error("--device cuda: no CUDA device is available on this machine");
    return load_plugin(spec.substr(7), device);
  }
  Implementation impl;
  impl.name = spec;
  impl.device = device;
  if (spec == "host") {
    if (device != Device::cpu) throw std::runtime_error("implementation 'host' runs on the cpu only");
    impl.api = gate_residual_host_plugin();
    impl.thread_safe = true;  // no state between calls; last_error() is per thread
    return impl;
  }
  if (spec == "cuda") {
    if (device != Device::cuda) throw std::runtime_error("implementation 'cuda' runs on cuda only");
    if (!cuda_available()) throw std::runtime_error("implementation 'cuda': no CUDA device is available on this machine");
    impl.api = gate_residual_cuda_plugin();
    impl.thread_safe = true;  // per-stream workspaces under a lock; last_error() is per thread
    impl.calls_on_problem_stream = true;
    return impl;
  }
  if (spec == "torch-eager") {
#if GATECHECK_HAVE_TORCH
    if (device == Device::cuda && !cuda_available())
      throw std::runtime_error("implementation 'torch-eager' on cuda: no CUDA device is available");
    impl.api = torch_eager_plugin(device);
    if (!impl.api)
      throw std::runtime_error(std::string("implementation 'torch-eager': this LibTorch cannot run on ") +
                               device_name(device));
    // LibTorch's eager ops and autograd may be called from several threads
    // (each call builds its own tensors and graph); last_error() is per
    // thread. Its intra-op threads: see harness/parallel_calls.h.
    impl.thread_safe = true;
    return impl;
#else
    throw std::runtime_error("implementation 'torch-eager': this gatecheck was built without LibTorch");
#endif
  }
  throw SpecError("unknown implementation '" + spec + "' (host, cuda, torch-eager, plugin:PATH, python:TARGET)");
}

void prepare_parallel_calls(int jobs) {
#if GATECHECK_HAVE_TORCH
  // Each of LibTorch's eager ops may fan out over its intra-op pool (OpenMP),
  // and with several workers calling it at once, that pool times the workers
  // would fight over the cores (OpenMP threads spin while they wait). Its
  // results do not depend on that pool's size: torch-eager's ops are
  // elementwise, index_select and a serial index_add_. So each worker gets
  // its share of the cores, one thread at least.
  static const int initial = torch_eager_intra_op_threads();
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  torch_eager_set_intra_op_threads(jobs <= 1 ? initial : std::max(1, int(cores) / jobs));
#else
  (void)jobs;
#endif
}

std::vector<Implementation> available_implementations(const std::string& device_filter) {
  std::vector<Implementation> v;
  const bool cpu = device_filter.empty() || device_filter == "cpu";
  const bool gpu = (device_filter.empty() || device_filter == "cuda") && cuda_available();
  if (cpu) v.push_back(make_implementation("host", Device::cpu));
#if GATECHECK_HAVE_TORCH
  if (cpu) v.push_back(make_implementation("torch-eager", Device::cpu));
#endif
  if (gpu) v.push_back(make_implementation("cuda", Device::cuda));
#if GATECHECK_HAVE_TORCH
  if (gpu) {
    try {
      v.push_back(make_implementation("torch-eager", Device::cuda));
    } catch (const std::exception&) {
      // a CPU-only LibTorch: torch-eager on cuda is simply not available here
    }
  }
#endif
  return v;
}

}  // namespace gatecheck
