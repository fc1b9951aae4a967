// One interface for everything gatecheck can test: the project's CUDA kernels
// and their host twin, LibTorch eager, external plugins, and Python callables.
// Each is a gatecheck_plugin (the plugin C ABI) plus a name and a device, or,
// for Python, an object called with tensors (tensor_calls.h). What each one
// claims is the properties' business (properties/contract.h).
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "../kernels/gate_residual.h"
#include "tensor_calls.h"

namespace gatecheck {

struct Implementation {
  std::string name;   // "host", "cuda", "torch-eager", "plugin:PATH", "python:TARGET"
  Device device = Device::cpu;
  const gatecheck_plugin* api = nullptr;      // the C ABI, or
  std::shared_ptr<const TensorCalls> tensors;  // calls with tensors (python:), api unused
  std::shared_ptr<void> keepalive;  // dlopen handle, torch state, ...
  // What the harness may rely on when it runs cases on several threads:
  //  - thread_safe: calls from several threads at once are safe (host, cuda
  //    and torch-eager, which make_implementation marks). Otherwise (plugins,
  //    and any implementation put together by hand) forward and backward
  //    take a lock per plugin: the ABI promises one thread at a time.
  //  - calls_on_problem_stream: on CUDA, every bit of device work goes on
  //    problem.stream (cuda), so waiting for that stream is enough; otherwise
  //    the runner waits for the whole device.
  bool thread_safe = false;
  bool calls_on_problem_stream = false;
  // The contract the implementation declares for itself, in the syntax of
  // --claims (a Python implementation's gatecheck_claims); "" declares none.
  // properties/contract.h reads it.
  std::string declared_claims;

  // Calls through the ABI (a non-zero return becomes a Status whose message is
  // last_error(), or a generic one naming the return code), or with tensors.
  // The C ABI's backward takes no res; a tensor implementation's does (its
  // autograd may need it), so every caller passes it.
  Status forward(const gatecheck_problem& p, const void* res, const void* gate,
                 const int64_t* index, const void* y, void* out) const;
  Status backward(const gatecheck_problem& p, const void* grad_out, const void* gate,
                  const int64_t* index, const void* y, void* grad_res, void* grad_gate,
                  void* grad_y, const void* res) const;
  // Forward then backward on the same buffers in one call, for a tensor
  // implementation (TensorCalls::forward_backward; an error for the C ABI,
  // whose callers make the two calls). *failed_in_forward says which failed.
  Status forward_backward(const gatecheck_problem& p, const void* res, const void* gate, const int64_t* index,
                          const void* y, void* out, const void* grad_out, void* grad_res, void* grad_gate,
                          void* grad_y, bool* failed_in_forward) const;
  std::string label() const { return name + "@" + device_name(device); }
  // The devices it runs on, as the ABI's bit mask (1u << device).
  uint32_t devices() const;
  bool takes_tensors() const { return tensors != nullptr; }
};

// Makers of implementations whose spec starts with a prefix ("python:"),
// registered by the program that links them (the Python door needs
// libpython, which the harness itself does not link). `rest` is the spec
// after the prefix. A maker throws std::runtime_error when it cannot make
// one, or SpecError when the spec itself is malformed.
using ImplementationMaker = Implementation (*)(const std::string& rest, Device device);
void register_implementation_maker(const std::string& prefix, ImplementationMaker maker);
struct SpecError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Implementation registry. Specs: "host", "cuda", "torch-eager" (device from
// `device`), "plugin:PATH", "python:TARGET" (where the program registered its
// maker). Throws std::runtime_error with a clear message when a spec cannot
// be made (plugin failed to load, no GPU), SpecError when it is malformed or
// names no implementation.
Implementation make_implementation(const std::string& spec, Device device);

// Every implementation available on this machine for the device filter
// ("" = all devices): host, torch-eager (cpu), and with a GPU cuda and
// torch-eager (cuda).
std::vector<Implementation> available_implementations(const std::string& device_filter);

// Before `jobs` threads call implementations at once (and with jobs = 1
// after): shares the cores between them and LibTorch's intra-op threads.
void prepare_parallel_calls(int jobs);

// Whether a CUDA device is usable here (false, quietly, when there is none).
bool cuda_available();

}  // namespace gatecheck
