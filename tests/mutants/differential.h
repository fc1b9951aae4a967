// A differential predicate for these tests: does an implementation's result
// differ from the host twin's, bit for bit, on any output, or leave memory
// findings? (The property suite judges against the oracle; this needs nothing
// but the runner, so the shrinker and the mutants can be tested on their own.)
#pragma once

#include "harness/run/runner.h"
#include "properties/catalog/contract.h"
#include "kernels/host/gate_residual_host.h"

namespace gatecheck::testing {

inline Subject host_impl() {
  Subject h;
  h.name = "host";
  h.api = gate_residual_host_plugin();
  return h;
}

inline bool differs_from_host(const Subject& impl, const Case& c) {
  const RunResult want = run_case(host_impl(), c);
  const RunResult got = run_case(impl, c);
  if (!got.status.ok() || !got.memory.empty()) return true;
  return !(got.outputs["out"] == want.outputs["out"] && got.outputs["grad_res"] == want.outputs["grad_res"] &&
           got.outputs["grad_y"] == want.outputs["grad_y"] && got.outputs["grad_gate"] == want.outputs["grad_gate"]);
}

}  // namespace gatecheck::testing
