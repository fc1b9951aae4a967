// One interface for everything gatecheck can test, for any op: the project's
// CUDA kernels and their host twin, LibTorch eager, external plugins (ABI v1
// for gate_residual, v2 for any op), and Python callables. Each is one of the
// two C ABIs or an object called with tensors (tensor_calls.h), plus a name,
// a device and the op it implements. What each one claims is the properties'
// business (properties/catalog/contract.h).
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../kernels/gatecheck_plugin_v2.h"
#include "../../kernels/gatecheck_split_exchange.h"
#include "../../kernels/op_schema.h"
#include "tensor_calls.h"

namespace gatecheck {

struct Implementation {
  std::string name;   // "host", "cuda", "torch-eager", "plugin:PATH", "python:TARGET"
  Device device = Device::cpu;
  const OpSchema* op = &gate_residual_schema();
  const gatecheck_plugin* api = nullptr;        // the C ABI v1 (gate_residual), or
  const gatecheck_op_plugin* api2 = nullptr;    // the C ABI v2, or
  std::shared_ptr<const TensorCalls> tensors;   // calls with tensors (python:)
  std::shared_ptr<void> keepalive;  // dlopen handle, torch state, ...
  // How its row reductions combine across a split of the batch
  // (gatecheck_split_exchange.h), or null: the harness then sums the parts'
  // gradients in fp32 in rank order, as frameworks do.
  const gatecheck_split_exchange* exchange = nullptr;
  // What the harness may rely on when it runs cases on several threads:
  //  - thread_safe: calls from several threads at once are safe (host, cuda
  //    and torch-eager, which their makers mark). Otherwise (plugins, and any
  //    implementation put together by hand) forward and backward take a lock
  //    per plugin: the ABI promises one thread at a time.
  //  - calls_on_problem_stream: on CUDA, every bit of device work goes on
  //    problem.stream (cuda), so waiting for that stream is enough; otherwise
  //    the runner waits for the whole device.
  bool thread_safe = false;
  bool calls_on_problem_stream = false;
  // The contract the implementation declares for itself, in the syntax of
  // --claims (a Python implementation's gatecheck_claims, a built-in's known
  // weaknesses); "" declares none. properties/catalog/contract.h reads it.
  std::string declared_claims;

  // One call (c.pass says which) through the implementation's ABI: a non-zero
  // return becomes a Status whose message is last_error(), or a generic one
  // naming the return code; or with tensors.
  Status call(const OpCall& c) const;
  // Forward then backward on the same buffers in one call, for a tensor
  // implementation (TensorCalls::forward_backward; an error for the C ABIs,
  // whose callers make the two calls). *failed_in_forward says which failed.
  Status forward_backward(const OpCall& fwd, const OpCall& bwd, bool* failed_in_forward) const;
  // A declared split exchange: through the C ABI (exchange) or with tensors
  // (a Python implementation's gatecheck_split_exchange). Its calls: the
  // state of a backward call's rows (its outputs unused), the states combined
  // in rank order, the row reductions of a backward call (its other outputs
  // unused).
  bool has_exchange() const { return exchange || (tensors && !tensors->exchange_state().empty()); }
  std::string exchange_state() const;  // what a state is
  Status exchange_partial(const OpCall& bwd, std::vector<uint64_t>* state) const;
  Status exchange_combine(const gatecheck_problem& p, const std::vector<const std::vector<uint64_t>*>& states,
                          std::vector<uint64_t>* out) const;
  Status exchange_finalize(const OpCall& bwd, const std::vector<uint64_t>& state) const;
  std::string label() const { return name + "@" + device_name(device); }
  // The devices it runs on, as the ABI's bit mask (1u << device).
  uint32_t devices() const;
  bool takes_tensors() const { return tensors != nullptr; }
  // What its calls serialise on when it is not thread-safe (one per plugin).
  const void* call_lock_key() const;
  // Does a call of `pass` hand it the op's input i? A tensor
  // implementation's backward gets every input (its autograd may need any);
  // a C ABI's, those the op's backward reads (OpCall::reads).
  bool receives(Pass pass, size_t input) const;
};

// Makers of implementations whose spec starts with a prefix ("python:"),
// registered by the program that links them (the Python door needs
// libpython, which the harness itself does not link). `rest` is the spec
// after the prefix. A maker throws std::runtime_error when it cannot make
// one, or SpecError when the spec itself is malformed.
using ImplementationMaker = Implementation (*)(const std::string& rest, Device device, const OpSchema& op);
void register_implementation_maker(const std::string& prefix, ImplementationMaker maker);
struct SpecError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A built-in implementation of an op ("host", "cuda", "torch-eager"): its
// maker, and the devices it runs on. builtin_impls.cpp lists gatecheck's own;
// an op defined elsewhere (a test's) registers its own.
struct BuiltinImplementation {
  const char* name;
  uint32_t devices;                    // (1u << device) for each it runs on
  Implementation (*make)(Device d);    // throws std::runtime_error when it cannot run here
};
bool register_builtin_implementation(const OpSchema& op, const BuiltinImplementation& b);
std::vector<BuiltinImplementation> builtin_implementations(const OpSchema& op);

// Implementation registry. Specs: a built-in's name (device from `device`),
// "plugin:PATH", "python:TARGET" (where the program registered its maker),
// each for `op`. Throws std::runtime_error with a clear message when a spec
// cannot be made (plugin failed to load, no GPU), SpecError when it is
// malformed or names no implementation of the op.
Implementation make_implementation(const std::string& spec, Device device,
                                   const OpSchema& op = gate_residual_schema());

// Every built-in implementation of op available on this machine for the
// device filter ("" = all devices): for gate_residual host and torch-eager on
// the CPU, and with a GPU cuda and torch-eager on CUDA.
std::vector<Implementation> available_implementations(const std::string& device_filter,
                                                       const OpSchema& op = gate_residual_schema());

// Before `jobs` threads call implementations at once (and with jobs = 1
// after): shares the cores between them and LibTorch's intra-op threads.
void prepare_parallel_calls(int jobs);

// Whether a CUDA device is usable here (false, quietly, when there is none).
bool cuda_available();

}  // namespace gatecheck
