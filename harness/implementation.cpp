#include "implementation.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "../kernels/cuda/gate_residual_cuda.h"
#include "../kernels/host/gate_residual_host.h"
#include "../properties/case.h"
#include "plugin_loader.h"
#include "plugin_stdout.h"
#if GATECHECK_HAVE_TORCH
#include "../kernels/torch/torch_eager.h"
#endif

namespace gatecheck {

namespace {
bool is_output(const std::string& o) {
  for (const char* n : kOutputNames)
    if (o == n) return true;
  return false;
}
// Does claim c ("p" or "p:o") cover (property, output)?
bool covers(const std::string& c, const std::string& property, const std::string& output) {
  const auto colon = c.find(':');
  if (colon == std::string::npos) return c == property;
  return c.compare(0, colon, property) == 0 && colon == property.size() &&
         (output.empty() || c.compare(colon + 1, std::string::npos, output) == 0);
}
}  // namespace

bool Contract::claims_for(const std::string& property, const std::string& output, DType t) const {
  bool claimed = false;
  for (const auto& c : claims) claimed = claimed || covers(c, property, output);
  if (!claimed) return false;
  for (const auto& e : exceptions) {
    const bool dtype_hit = e.dtypes.empty() || std::find(e.dtypes.begin(), e.dtypes.end(), t) != e.dtypes.end();
    // An exception on "p:o" withdraws that output, and with output "" the
    // property as a whole is no longer fully claimed either.
    if (dtype_hit && (covers(e.claim, property, output) || (output.empty() && e.claim.rfind(property + ":", 0) == 0)))
      return false;
  }
  return true;
}

std::string Contract::describe() const {
  std::ostringstream s;
  const auto& def = default_properties();
  const bool all_default = std::all_of(def.begin(), def.end(), [&](const std::string& p) {
    return std::find(claims.begin(), claims.end(), p) != claims.end();
  });
  if (all_default) {
    s << "default set";
    for (const auto& c : claims)
      if (std::find(def.begin(), def.end(), c) == def.end()) s << " + " << c;
  } else {
    for (size_t i = 0; i < claims.size(); ++i) s << (i ? "," : "") << claims[i];
  }
  for (const auto& e : exceptions) {
    s << "; not " << e.claim;
    if (!e.dtypes.empty()) {
      s << " for ";
      for (size_t i = 0; i < e.dtypes.size(); ++i) s << (i ? "," : "") << dtype_name(e.dtypes[i]);
    }
    if (!e.reason.empty()) s << " (" << e.reason << ")";
  }
  return s.str();
}

Contract Contract::everything() { return Contract{default_properties(), {}}; }

Contract Contract::parse(const std::string& list) {
  Contract c;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    const auto colon = item.find(':');
    const std::string p = item.substr(0, colon);
    if (!is_property(p))
      throw std::invalid_argument("--claims: " + unknown_property(p) + " in '" + item + "'");
    if (colon != std::string::npos && !is_output(item.substr(colon + 1)))
      throw std::invalid_argument("--claims: unknown output '" + item.substr(colon + 1) + "' in '" +
                                  item + "' (out, grad_res, grad_y, grad_gate)");
    c.claims.push_back(item);
  }
  return c;
}

namespace {
bool is_plugin(const Implementation& impl) { return impl.name.rfind("plugin:", 0) == 0; }

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
  const PluginStdoutToStderr quiet(is_plugin(*this));  // through last_error() too
  return from_rc(*this, "forward", api->forward(&p, res, gate, index, y, out));
}

Status Implementation::backward(const gatecheck_problem& p, const void* grad_out, const void* gate,
                                const int64_t* index, const void* y, void* grad_res,
                                void* grad_gate, void* grad_y) const {
  const PluginStdoutToStderr quiet(is_plugin(*this));
  return from_rc(*this, "backward",
                 api->backward(&p, grad_out, gate, index, y, grad_res, grad_gate, grad_y));
}

bool cuda_available() {
  static const bool ok = [] {
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
  }();
  return ok;
}

Implementation make_implementation(const std::string& spec, Device device) {
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
    impl.contract = Contract::everything();
    return impl;
  }
  if (spec == "cuda") {
    if (device != Device::cuda) throw std::runtime_error("implementation 'cuda' runs on cuda only");
    if (!cuda_available()) throw std::runtime_error("implementation 'cuda': no CUDA device is available on this machine");
    impl.api = gate_residual_cuda_plugin();
    impl.contract = Contract::everything();
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
    impl.contract = Contract::everything();
    impl.contract.exceptions.push_back(
        {"accuracy:grad_gate", {DType::bf16, DType::f16}, "index_add accumulates in the dtype"});
    if (device == Device::cpu) {
      // Found by gatecheck (tests/properties/torch_finding_test.cpp): a bf16
      // NaN result's bits depend on whether the row fell in the vectorised
      // body or the scalar tail of LibTorch's CPU loop, i.e. on its place in
      // the batch (0xffff vs 0x7fc0). f16 and f32 held over 300 NaN cases each.
      for (const char* out : {"row_invariance:out", "row_invariance:grad_y"})
        impl.contract.exceptions.push_back({out, {DType::bf16}, "NaN bits depend on the row's place in the batch"});
    }
    if (device == Device::cuda) {
      impl.contract.exceptions.push_back({"repeatable", {}, "index_add uses atomics"});
      impl.contract.exceptions.push_back(
          {"segment_invariance", {}, "atomics order a gate's rows by timing"});
    }
    return impl;
#else
    throw std::runtime_error("implementation 'torch-eager': this gatecheck was built without LibTorch");
#endif
  }
  throw std::runtime_error("unknown implementation '" + spec +
                           "' (host, cuda, torch-eager, plugin:PATH)");
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
