#include "implementation.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <thread>

#include "abi_calls.h"
#include "plugin_call_lock.h"
#include "plugin_loader.h"
#include "plugin_stdout.h"
#if GATECHECK_HAVE_TORCH
#include "../../kernels/torch/torch_eager.h"  // its intra-op threads
#endif

namespace gatecheck {

namespace {
// Code that is not ours, sharing our stdout: plugins, and Python (print()).
bool is_plugin(const Implementation& impl) { return impl.name.rfind("plugin:", 0) == 0 || impl.tensors; }
Status no_exchange(const Implementation& impl) {
  return Status::error(ErrorKind::implementation, impl.label() + " declares no split exchange");
}
}  // namespace

Status TensorCalls::exchange_partial(const OpCall&, std::vector<uint64_t>*) const {
  return Status::error(ErrorKind::implementation, "no split exchange declared");
}
Status TensorCalls::exchange_combine(const std::vector<const std::vector<uint64_t>*>&, std::vector<uint64_t>*) const {
  return Status::error(ErrorKind::implementation, "no split exchange declared");
}
Status TensorCalls::exchange_finalize(const OpCall&, const std::vector<uint64_t>&) const {
  return Status::error(ErrorKind::implementation, "no split exchange declared");
}

const void* Implementation::call_lock_key() const {
  if (api) return api;
  if (api2) return api2;
  return tensors.get();
}

bool Implementation::receives(Pass pass, size_t input) const {
  const OpInput& in = op->inputs[input];
  if (pass == Pass::forward) return in.pass == Pass::forward;
  return tensors || in.pass == Pass::backward || in.in_backward;
}

Status Implementation::call(const OpCall& c) const {
  const PluginCallLock lock(call_lock_key(), !thread_safe);  // through last_error() too
  const PluginStdoutToStderr quiet(is_plugin(*this));        // (and this)
  if (tensors) return tensors->call(c);
  if (api2) return call_abi_v2(*api2, c, !is_plugin(*this));
  if (api && c.op == &gate_residual_schema()) return call_abi_v1(*api, c, !is_plugin(*this));
  return Status::error(ErrorKind::implementation, label() + " has no way to call " + c.op->name);
}

Status Implementation::forward_backward(const OpCall& fwd, const OpCall& bwd, bool* failed_in_forward) const {
  *failed_in_forward = true;
  if (!tensors)  // the C ABIs have no such call: callers make two, with a wait between
    return Status::error(ErrorKind::implementation, "forward_backward: " + label() + " takes no tensors");
  const PluginCallLock lock(call_lock_key(), !thread_safe);
  const PluginStdoutToStderr quiet(true);
  return tensors->forward_backward(fwd, bwd, failed_in_forward);
}

std::string Implementation::exchange_state() const {
  if (exchange) return exchange->state ? exchange->state : "";
  return tensors ? tensors->exchange_state() : "";
}

Status Implementation::exchange_partial(const OpCall& bwd, std::vector<uint64_t>* state) const {
  const PluginCallLock lock(call_lock_key(), !thread_safe);
  const PluginStdoutToStderr quiet(is_plugin(*this));
  if (!exchange) return tensors ? tensors->exchange_partial(bwd, state) : no_exchange(*this);
  const int64_t words = exchange->state_words(&bwd.p);
  if (words < 0)
    return Status::error(ErrorKind::implementation, label() + ": state_words returned " + std::to_string(words));
  state->assign(size_t(words), 0);
  return exchange_partial_v2(*exchange, bwd, state->data(), !is_plugin(*this));
}

Status Implementation::exchange_combine(const gatecheck_problem& p,
                                        const std::vector<const std::vector<uint64_t>*>& states,
                                        std::vector<uint64_t>* out) const {
  const PluginCallLock lock(call_lock_key(), !thread_safe);
  const PluginStdoutToStderr quiet(is_plugin(*this));
  if (!exchange) return tensors ? tensors->exchange_combine(states, out) : no_exchange(*this);
  const int64_t words = exchange->state_words(&p);
  std::vector<const uint64_t*> ptrs;
  for (size_t i = 0; i < states.size(); ++i) {
    if (int64_t(states[i]->size()) != words)
      return Status::error(ErrorKind::implementation, label() + ": state " + std::to_string(i) + " has " +
                                                          std::to_string(states[i]->size()) + " words, state_words " +
                                                          std::to_string(words));
    ptrs.push_back(states[i]->data());
  }
  out->assign(size_t(std::max<int64_t>(words, 0)), 0);
  return exchange_combine_v2(*exchange, p, ptrs, out->data(), !is_plugin(*this));
}

Status Implementation::exchange_finalize(const OpCall& bwd, const std::vector<uint64_t>& state) const {
  const PluginCallLock lock(call_lock_key(), !thread_safe);
  const PluginStdoutToStderr quiet(is_plugin(*this));
  if (!exchange) return tensors ? tensors->exchange_finalize(bwd, state) : no_exchange(*this);
  if (int64_t(state.size()) != exchange->state_words(&bwd.p))
    return Status::error(ErrorKind::implementation, label() + ": a state of " + std::to_string(state.size()) +
                                                        " words, state_words " +
                                                        std::to_string(exchange->state_words(&bwd.p)));
  return exchange_finalize_v2(*exchange, bwd, state.data(), !is_plugin(*this));
}

uint32_t Implementation::devices() const {
  if (tensors) return (1u << GATECHECK_CPU) | (1u << GATECHECK_CUDA);
  if (api2) return api2->devices;
  return api ? api->devices : 0u;
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

Implementation make_implementation(const std::string& spec, Device device, const OpSchema& op) {
  for (const auto& [prefix, maker] : makers())
    if (spec.rfind(prefix, 0) == 0) return maker(spec.substr(prefix.size()), device, op);
  if (spec.rfind("python:", 0) == 0)
    throw std::runtime_error("implementation '" + spec + "': this program was built without the Python door "
                             "(it needs Python 3 with torch, python3-dev and pybind11 at configure time)");
  if (spec.rfind("plugin:", 0) == 0) {
    if (device == Device::cuda && !cuda_available())
      throw std::runtime_error("--device cuda: no CUDA device is available on this machine");
    return load_plugin(spec.substr(7), device, op);
  }
  std::string names;
  for (const BuiltinImplementation& b : builtin_implementations(op)) {
    names += std::string(b.name) + ", ";
    if (spec != b.name) continue;
    if (!(b.devices & (1u << int(device)))) {
      std::string on;
      for (Device d : {Device::cpu, Device::cuda})
        if (b.devices & (1u << int(d))) on += std::string(on.empty() ? "" : " and ") + device_name(d);
      throw std::runtime_error("implementation '" + spec + "' of " + op.name + " runs on " + on + " only");
    }
    Implementation impl = b.make(device);
    impl.name = spec;
    impl.device = device;
    impl.op = &op;
    return impl;
  }
  throw SpecError("unknown implementation '" + spec + "' of " + op.name + " (" + names + "plugin:PATH, python:TARGET)");
}

void prepare_parallel_calls(int jobs) {
#if GATECHECK_HAVE_TORCH
  // Each of LibTorch's eager ops may fan out over its intra-op pool (OpenMP),
  // and with several workers calling it at once, that pool times the workers
  // would fight over the cores (OpenMP threads spin while they wait). Its
  // results do not depend on that pool's size: torch-eager's ops are
  // elementwise, index_select and a serial index_add_. So each worker gets
  // its share of the cores, one thread at least.
  // (0: LibTorch's own count. Before LibTorch is loaded this loads nothing.)
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  torch_eager_set_intra_op_threads(jobs <= 1 ? 0 : std::max(1, int(cores) / jobs));
#else
  (void)jobs;
#endif
}

std::vector<Implementation> available_implementations(const std::string& device_filter, const OpSchema& op) {
  std::vector<Implementation> v;
  const bool gpu = cuda_available();
  for (Device d : {Device::cpu, Device::cuda}) {
    if (!device_filter.empty() && device_filter != device_name(d)) continue;
    if (d == Device::cuda && !gpu) continue;
    for (const BuiltinImplementation& b : builtin_implementations(op)) {
      if (!(b.devices & (1u << int(d)))) continue;
      try {
        v.push_back(make_implementation(b.name, d, op));
      } catch (const std::runtime_error&) {
        // not here (a CPU-only LibTorch, say): simply not available
      }
    }
  }
  return v;
}

}  // namespace gatecheck
