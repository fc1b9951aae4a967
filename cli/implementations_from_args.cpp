#include "implementations_from_args.h"

#include <stdexcept>

#include "cli.h"
#include "crash_guard.h"

namespace gatecheck {

std::string repeated_impl_problem(const std::vector<std::string>& specs) {
  for (size_t i = 0; i < specs.size(); ++i)
    for (size_t k = 0; k < i; ++k)
      if (specs[k] == specs[i]) return "--impl " + specs[i] + " is given twice";
  return "";
}

std::vector<Subject> implementations_from_args(const std::vector<std::string>& specs, const std::string& device,
                                               const std::string& claims, const std::string& valid,
                                               const std::string& op_name, double load_timeout) {
  const OpSchema* op = find_op_schema(op_name);
  if (!op) throw ImplArgsError{kExitUsage, "--op: " + unknown_op(op_name)};
  if (device == "cuda" && !cuda_available())
    throw ImplArgsError{kExitCannotRun, "--device cuda: no CUDA device is available on this machine"};
  if (const std::string twice = repeated_impl_problem(specs); !twice.empty()) throw ImplArgsError{kExitUsage, twice};
  std::vector<Subject> impls;
  try {
    const LoadWatch watch(load_timeout);
    if (specs.empty()) {
      impls = available_subjects(device, *op);
    } else {
      for (const auto& spec : specs) {
        if (spec == "plugin:")
          throw ImplArgsError{kExitUsage, "--impl plugin: needs the path of a shared library (plugin:PATH)"};
        if (spec == "python:")
          throw ImplArgsError{kExitUsage, "--impl python: needs a target (python:MODULE:ATTR or python:FILE.py:ATTR)"};
        if (spec == "cuda" && device == "cpu")
          throw ImplArgsError{kExitUsage, "--impl cuda runs on the GPU only; it cannot be combined with --device cpu"};
        Device d = Device::cpu;
        if (device == "cuda" || (device.empty() && spec == "cuda")) d = Device::cuda;
        // Loading runs the implementation's code: a plugin's constructors and entry point, a Python
        // module's import and gatecheck_setup.
        const char* what = spec.rfind("python:", 0) == 0   ? " (its module's import and gatecheck_setup)"
                           : spec.rfind("plugin:", 0) == 0 ? " (its constructors or its gatecheck_plugin_v2/v1())"
                                                           : "";
        CrashMessageScope loading("  while loading " + spec + what + "\n");
        impls.push_back(make_subject(spec, d, *op));
      }
    }
  } catch (const SpecError& e) {  // a malformed spec, or one that names nothing
    throw ImplArgsError{kExitUsage, e.what()};
  } catch (const std::invalid_argument& e) {  // a contract it declares that does not parse
    throw ImplArgsError{kExitUsage, e.what()};
  } catch (const std::exception& e) {
    throw ImplArgsError{kExitCannotRun, e.what()};
  }
  try {
    for (auto& i : impls) i.contract = override_contract(i.contract, claims, valid, *op);
  } catch (const std::invalid_argument& e) {
    throw ImplArgsError{kExitUsage, e.what()};
  }
  return impls;
}

}  // namespace gatecheck
