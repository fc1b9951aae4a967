// check_property's dispatch, claims and evidence text. The properties
// themselves live in *_properties.cpp, one file per kind of check.
#include "properties.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "../../harness/isolate/isolate.h"
#include "../../harness/run/stage_clock.h"
#include "property_impls.h"

namespace gatecheck {

Verdict check_property(const std::string& property, const Implementation& impl, const Case& c,
                       const PropertyOptions& opt) {
  const PropertyInfo& p = property_info(property);
  if (const std::string why = case_input_problem(c); !why.empty())
    throw std::invalid_argument("property '" + property + "' needs valid input (" + describe(c) + "): " + why);
  if (c.op != impl.op)
    throw std::invalid_argument("property '" + property + "': a case of " + c.op->name + " for " + impl.label() +
                                ", an implementation of " + impl.op->name);
  if (!applies_to(p, *c.op))
    throw std::invalid_argument("property '" + property + "' does not apply to " + c.op->name +
                                ", which has no output of the kinds it reads");
  Verdict v = p.check(impl, c, opt);
  v.property = property;
  return v;
}

Verdict check_property(const std::string& property, const Subject& s, const Case& c,
                       const PropertyOptions& opt) {
  if (const std::string why = s.contract.valid.why_not(c); !why.empty())
    throw std::invalid_argument("property '" + property + "' on " + s.label() + " needs valid input (" + describe(c) +
                                "): " + why);
  PropertyOptions o = opt;
  o.valid = o.valid.within(s.contract.valid);
  return check_property(property, static_cast<const Implementation&>(s), c, o);
}

Verdict with_probes_named(Verdict v, const std::string& property, const Subject& s, const Case& c,
                          const PropertyOptions& opt) {
  if (!v.probes_unnamed) return v;
  Verdict named = check_property(property, s, c, opt);
  return named.passed ? v : named;
}

bool breaks_claim(const Verdict& v, const Contract& contract, DType t) {
  if (v.passed) return false;
  // A failure not tied to one output (a crash, a vacuous plan, a bad
  // rejection) breaks the claim if any output of the property is claimed.
  auto any_output = [&] { return contract.claims_any_part(v.property, t); };
  if (v.failed_outputs.empty()) return any_output();
  for (const auto& o : v.failed_outputs)
    if (o.empty() ? any_output() : contract.claims_for(v.property, o, t)) return true;
  return false;
}

std::string evidence_text(const Verdict& v) {
  std::ostringstream s;
  s << v.property << ": " << (v.passed ? "passed" : "FAILED") << " (" << v.compared << " compared)\n";
  if (!v.message.empty()) s << "  " << v.message << "\n";
  for (const auto& c : v.comparisons) {
    std::istringstream lines(c.summary());
    for (std::string line; std::getline(lines, line);) s << "  " << line << "\n";
  }
  for (const auto& m : v.memory)
    s << "  [" << m.tensor << "] " << memory_finding_name(m.kind) << ": " << m.detail << "\n";
  return s.str();
}

namespace detail {

RunResult run(const Implementation& impl, const Case& c, const PropertyOptions& o, const RunOptions& r) {
  if (!o.isolate) return run_case(impl, c, r);
  const StageTimer t(Stage::child);
  return run_case_isolated(impl, c, r, o.isolate_timeout_seconds);
}

Verdict run_failed(const Case& c, const std::string& what, const Status& s) {
  Verdict v;
  v.passed = false;
  // Under --isolate a crash, exit or hang also comes back as a Status.
  v.message = what + (isolated_call_died(s.message) ? " did not complete" : " returned an error") + " on valid input (" + describe(c) +
              "): [" + error_kind_name(s.kind) + "] " + s.message;
  return v;
}

void add_failure(Verdict& v, const Comparison& cmp) {
  v.passed = false;
  bool seen = false;
  for (const auto& o : v.failed_outputs) seen = seen || o == cmp.tensor;
  if (!seen) v.failed_outputs.push_back(cmp.tensor);
  v.comparisons.push_back(cmp);
}

void merge_into(Comparison& a, const Comparison& b) {
  if (a.tensor.empty()) {  // the first part sets what kind of comparison the total is
    a.tensor = b.tensor;
    a.dtype = b.dtype;
    a.cols = b.cols;
    a.bitwise = b.bitwise;
    a.got_side = b.got_side;
    a.want_side = b.want_side;
  }
  a.checked += b.checked;
  a.failed += b.failed;
  a.nan_failed += b.nan_failed;
  a.inf_failed += b.inf_failed;
  // Parts can come in any order of index (batches of a plan): keep the extent.
  if (b.first_bad >= 0) a.first_bad = a.first_bad < 0 ? b.first_bad : std::min(a.first_bad, b.first_bad);
  if (b.last_bad >= 0) a.last_bad = std::max(a.last_bad, b.last_bad);
  for (const auto& m : b.first)
    if (a.first.size() < kMaxMismatches) a.first.push_back(m);
  a.max_err_over_bound = std::max(a.max_err_over_bound, b.max_err_over_bound);
}

}  // namespace detail
}  // namespace gatecheck
