// fuzz_OP: structure-aware differential fuzzing of one op (built once per op,
// gatecheck_add_op_fuzzer in CMakeLists.txt: fuzz_gate_residual, fuzz_rmsnorm_modulate).
// Input bytes decode into a Case and batch plan (case_decoder.h); every
// property the selected implementations claim is checked (see
// op_target.h for the environment variables). A claimed failure
// prints its evidence and repro command, saves the case as JSON and aborts,
// so libFuzzer keeps the input.
#include <cstdio>
#include <cstdlib>

#include "../harness/isolate/isolate.h"
#include "case_decoder.h"
#include "fuzz_stats.h"
#include "op_target.h"

using namespace gatecheck;
using namespace gatecheck::fuzz;

extern "C" const char* gatecheck_fuzz_op() { return GATECHECK_FUZZ_OP; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto found = run_fuzz_input(data, size);
  if (found.empty()) return 0;
  const Case c = decode_input(data, size);
  std::fprintf(stderr, "\n==== gatecheck: claimed property failed on %s\n", describe(c).c_str());
  for (const auto& f : found) {
    const std::string path = save_failure(target_config().failures_dir, c, f);
    std::fprintf(stderr, "---- %s on %s (signature %s)\n%s\n  case saved: %s\n  repro: %s\n",
                 f.failure.verdict.property.c_str(), f.spec.c_str(), f.failure.signature.c_str(),
                 f.failure.verdict.message.c_str(), path.c_str(),
                 repro_command(path, f.spec, isolated_call_died(f.failure.verdict.message)).c_str());
  }
  flush_stats();  // abort() skips exit handlers
  std::fflush(stderr);
  std::abort();
}
