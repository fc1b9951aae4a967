// The body of fuzz_gate_residual, shared by the libFuzzer target, the replay
// main and the benchmark. Configuration comes from the environment:
//   GATECHECK_FUZZ_IMPL        comma-separated specs, SPEC[@cpu|@cuda]: host (default),
//                              cuda, torch-eager, torch-eager@cuda, plugin:PATH[@cuda]
//   GATECHECK_FUZZ_PROPERTIES  comma-separated properties (default: the default set)
//   GATECHECK_FUZZ_IGNORE      comma-separated failure signatures already known
//                              (a campaign keeps going past them)
//   GATECHECK_FUZZ_FAILURES    folder for failing cases as JSON (default fuzz-failures)
//   GATECHECK_FUZZ_STATS       file for per-class case counts (JSON)
//   GATECHECK_FUZZ_ERROR_FEATURES=0  skip the extra run + oracle that gives the
//                              error-magnitude features (faster, less guided)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "../harness/implementation.h"
#include "fuzz_check.h"

namespace gatecheck::fuzz {

struct TargetConfig {
  std::vector<std::string> specs;          // as given, for repro commands
  std::vector<Subject> impls;
  std::vector<std::string> properties;
  std::vector<std::string> ignore;         // known signatures
  std::string failures_dir = "fuzz-failures";
  bool error_features = true;
};

// Parsed once; a bad spec or property name prints a clear message and exits 2.
const TargetConfig& target_config();
Subject make_spec(const std::string& spec);  // "SPEC[@cpu|@cuda]"; throws std::runtime_error
// The implementation specs of GATECHECK_FUZZ_IMPL (comma-separated; "host" if unset or empty).
std::vector<std::string> fuzz_impl_specs();

struct FoundFailure {
  std::string spec;
  Device device = Device::cpu;
  FuzzFailure failure;
};

// Decodes the input, marks features, counts it, and runs the properties on
// every configured implementation. Returns claimed failures not ignored.
std::vector<FoundFailure> run_fuzz_input(const uint8_t* data, size_t size);

// Writes the case with its failure record to dir; returns the path.
std::string save_failure(const std::string& dir, const Case& c, const FoundFailure& f,
                         const std::string& note = "found by fuzz_gate_residual");
std::string repro_command(const std::string& path, const std::string& spec);

}  // namespace gatecheck::fuzz
