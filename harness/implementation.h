// One interface for everything gatecheck can test: the project's CUDA kernels
// and their host twin, LibTorch eager, and external plugins. Each is a
// gatecheck_plugin (the plugin C ABI) plus a name, a device and a contract.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "../kernels/gate_residual.h"

namespace gatecheck {

// The property names, fixed across the project.
inline const std::vector<std::string>& default_properties() {
  static const std::vector<std::string> p = {
      "accuracy",         "row_invariance", "segment_invariance", "repeatable",
      "inputs_untouched", "full_write",     "no_oob_write",       "error_inputs"};
  return p;
}
inline const std::vector<std::string>& all_properties() {
  static const std::vector<std::string> p = [] {
    auto v = default_properties();
    v.push_back("eager_exact");  // opt-in
    return v;
  }();
  return p;
}
inline bool is_property(const std::string& p) {
  const auto& all = all_properties();
  return std::find(all.begin(), all.end(), p) != all.end();
}
// "unknown property 'p' (accuracy, row_invariance, ...)": every message about a
// bad property name lists the valid ones.
inline std::string unknown_property(const std::string& p) {
  std::string known;
  for (const auto& k : all_properties()) known += (known.empty() ? "" : ", ") + k;
  return "unknown property '" + p + "' (" + known + ")";
}

// Which properties an implementation claims. A claim is "property" (every
// output) or "property:output" (e.g. "accuracy:grad_gate"). An exception
// withdraws a claim for some dtypes, with the reason shown in reports.
struct Contract {
  std::vector<std::string> claims;
  struct Exception {
    std::string claim;           // "accuracy:grad_gate", "repeatable", ...
    std::vector<DType> dtypes;   // empty: every dtype
    std::string reason;
  };
  std::vector<Exception> exceptions;

  // Is (property, output) claimed for dtype t? output "" means the property as a whole.
  bool claims_for(const std::string& property, const std::string& output, DType t) const;
  std::string describe() const;  // "all default; not accuracy:grad_gate for bf16,f16 (...)"
  static Contract everything();  // the default property set, no exceptions
  // Parse "--claims" lists: comma-separated claims; throws std::invalid_argument
  // naming the bad item.
  static Contract parse(const std::string& list);
};

struct Implementation {
  std::string name;   // "host", "cuda", "torch-eager", "plugin:PATH"
  Device device = Device::cpu;
  Contract contract;
  const gatecheck_plugin* api = nullptr;
  std::shared_ptr<void> keepalive;  // dlopen handle, torch state, ...

  // Calls through the ABI; a non-zero return becomes a Status whose message is
  // last_error() (or a generic one naming the return code).
  Status forward(const gatecheck_problem& p, const void* res, const void* gate,
                 const int64_t* index, const void* y, void* out) const;
  Status backward(const gatecheck_problem& p, const void* grad_out, const void* gate,
                  const int64_t* index, const void* y, void* grad_res, void* grad_gate,
                  void* grad_y) const;
  std::string label() const { return name + "@" + device_name(device); }
};

// Implementation registry. Specs: "host", "cuda", "torch-eager" (device from
// `device`), "plugin:PATH". Throws std::runtime_error with a clear message
// when a spec cannot be made (unknown name, plugin failed to load, no GPU).
Implementation make_implementation(const std::string& spec, Device device);

// Every implementation available on this machine for the device filter
// ("" = all devices): host, torch-eager (cpu), and with a GPU cuda and
// torch-eager (cuda).
std::vector<Implementation> available_implementations(const std::string& device_filter);

// Whether a CUDA device is usable here (false, quietly, when there is none).
bool cuda_available();

}  // namespace gatecheck
