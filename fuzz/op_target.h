// The body of every op's fuzz target (fuzz_gate_residual, fuzz_OP: one
// binary an op, fuzz_op.cpp), shared by the libFuzzer target, the replay main
// and the benchmark. The op is the binary's (gatecheck_fuzz_op()) unless
// GATECHECK_FUZZ_OP names another. Configuration comes from the environment:
//   GATECHECK_FUZZ_OP          the op (`gatecheck ops` lists them)
//   GATECHECK_FUZZ_IMPL        comma-separated specs, SPEC[@cpu|@cuda]: host (default),
//                              cuda, torch-eager, torch-eager@cuda, plugin:PATH[@cuda]
//   GATECHECK_FUZZ_PROPERTIES  comma-separated properties (default: every one an implementation
//                              claims, opt-in ones included; error_inputs is check's)
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

#include "../harness/impls/implementation.h"
#include "case_decoder.h"
#include "fuzz_check.h"

namespace gatecheck::fuzz {

// The op a fuzz binary is built for: fuzz_op.cpp defines it from the
// binary's GATECHECK_FUZZ_OP; programs that define none get gate_residual.
extern "C" const char* gatecheck_fuzz_op();

struct TargetConfig {
  const OpSchema* op = nullptr;
  std::string name;                        // "fuzz_OP", for messages
  std::vector<std::string> specs;          // as given, for repro commands
  std::vector<Subject> impls;
  std::vector<std::string> properties;
  std::vector<std::string> ignore;         // known signatures
  std::string failures_dir = "fuzz-failures";
  bool error_features = true;
};

// Parsed once; a bad spec or property name prints a clear message and exits 2.
// The op this target fuzzes: GATECHECK_FUZZ_OP, else the one it was built for
// (exits 2 naming the ops when there is no such op).
const OpSchema& fuzz_target_op();
const TargetConfig& target_config();
// "SPEC[@cpu|@cuda]": the implementation's name and device ("cuda" alone is on cuda).
struct SpecParts {
  std::string name;
  Device device;
};
SpecParts split_spec(const std::string& spec);
Subject make_spec(const std::string& spec, const OpSchema& op);  // throws std::runtime_error
// The repro line of a case saved for SPEC[@cpu|@cuda] (findings/repro_command.h).
std::string repro_command(const std::string& path, const std::string& spec, bool isolate = false);
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

// The case the target decodes from these bytes (for the configured op).
Case decode_input(const uint8_t* data, size_t size, DecodeInfo* info = nullptr);

// Writes the case with its failure record to dir through the findings
// service (findings/failure_files.h: its name, record and repro line, as
// every front end's); returns the path.
std::string save_failure(const std::string& dir, const Case& c, const FoundFailure& f, const std::string& note = "");

}  // namespace gatecheck::fuzz
