#include "fuzz_check.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "../harness/run/runner.h"
#include "../oracles/oracle.h"
#include "../properties/engine/check_engine.h"
#include "../properties/generate/generators.h"

namespace gatecheck::fuzz {

std::vector<std::string> fuzz_properties() {
  std::vector<std::string> props;
  if (const char* env = std::getenv("GATECHECK_FUZZ_PROPERTIES")) {
    std::stringstream ss(env);
    std::string p;
    while (std::getline(ss, p, ','))
      if (!p.empty()) props.push_back(p);
    return props;
  }
  // Every property an implementation may claim, opt-in ones too (split_invariance,
  // eager_exact): check_claims skips what a contract does not claim. Bad input
  // is error_inputs', which `check` probes.
  for (const auto& p : property_catalog())
    if (p.reads != Reads::rejections) props.push_back(p.name);
  return props;
}

std::string fuzz_properties_problem(const std::vector<std::string>& properties) {
  // Set but empty ("" or ","): a fuzzer that checks nothing and so finds nothing.
  if (properties.empty())
    return "GATECHECK_FUZZ_PROPERTIES is set but names no property (unset it for the default set)";
  for (const auto& p : properties)
    if (!is_property(p)) return "GATECHECK_FUZZ_PROPERTIES: " + unknown_property(p);
  return "";
}

std::string failure_signature(const std::string& impl, const Verdict& v) {
  std::vector<std::string> outs = v.failed_outputs;
  std::sort(outs.begin(), outs.end());
  outs.erase(std::unique(outs.begin(), outs.end()), outs.end());
  std::string joined;
  for (const auto& o : outs) joined += (joined.empty() ? "" : "+") + (o.empty() ? std::string("-") : o);
  return v.property + "|" + impl + "|" + (joined.empty() ? "-" : joined);
}

std::vector<FuzzFailure> check_claims(const Subject& impl, const Case& c,
                                      const std::vector<std::string>& props, const PropertyOptions& opt) {
  std::vector<FuzzFailure> failures;
  for (const auto& p : props) {
    if (!claimed_for_some_dtype(impl.contract, p, {c.dtype})) continue;  // findings belong to `gatecheck check`
    // A plan that moves no row cannot test invariance; the property would
    // (rightly) call itself vacuous. Decoded cases are not filtered like
    // generated ones, so such a case is simply not an invariance test.
    if (!plan_moves_rows(p, c)) continue;
    Verdict v = check_property(p, impl, c, opt);
    if (v.passed || !breaks_claim(v, impl.contract, c.dtype)) continue;
    std::string sig = failure_signature(impl.name, v);
    failures.push_back({std::move(v), std::move(sig)});
  }
  return failures;
}

std::vector<double> error_over_bound(const Subject& impl, const Case& c) {
  std::vector<double> r(c.op->outputs.size(), -1.0);
  const RunResult run = run_case(impl, c);
  if (!run.status.ok()) return r;
  const Reference ref = oracle_reference(c);
  for (size_t i = 0; i < r.size(); ++i)
    r[i] = compare_accuracy(c.op->outputs[i].name, run.outputs.tensors[i], ref.outputs[i]).max_err_over_bound;
  return r;
}

}  // namespace gatecheck::fuzz
