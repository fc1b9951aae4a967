// shrink_case(): the shrinking search with "the same property still fails"
// as its predicate. Same failure means: the property fails, on at least one
// of the outputs that failed originally (so a real mismatch cannot turn into,
// say, a vacuous plan; nor can a failure not tied to an output: a vacuous
// verdict stands in only for a vacuous one), and, when the original failure
// broke a claim, the candidate's failure breaks a claim too.
#include <algorithm>
#include <stdexcept>

#include "shrink.h"

namespace gatecheck {

namespace {
bool shares_an_output(const Verdict& a, const Verdict& b) {
  if (a.failed_outputs.empty()) return true;  // not tied to an output: any failure of the property
  for (const auto& o : b.failed_outputs)
    if (std::find(a.failed_outputs.begin(), a.failed_outputs.end(), o) != a.failed_outputs.end()) return true;
  return false;
}
}  // namespace

ShrinkResult shrink_case(const Subject& impl, const std::string& property, const Case& c,
                         const ShrinkLog& log, double max_seconds, const PropertyOptions& popt,
                         const ShrinkStop& stop) {
  // A property that checks another problem in place of a case that cannot carry it (error_inputs,
  // for a case with no rows) shrinks that problem, among the cases it checks as they are: a
  // minimal case of no rows named another problem than the one its evidence came from.
  const StandIn stand_in = property_info(property).stand_in;
  const ValidInputs valid = popt.valid.within(impl.contract.valid);
  Case scratch;
  auto checked_as_is = [&](const Case& x) { return !stand_in || !stand_in(x, valid, &scratch); };
  Case start = c;
  if (!checked_as_is(c)) start = scratch;
  const Verdict original = check_property(property, impl, start, popt);
  if (original.passed)
    throw std::invalid_argument("property '" + property + "' passes on " + impl.label() +
                                " for this case (" + describe(start) + "); nothing to shrink");
  const bool claimed = breaks_claim(original, impl.contract, c.dtype);
  // The verdict of the last accepted candidate is the verdict on the minimal
  // case (re-running could pass for a failure that is not repeatable).
  Verdict last = original;
  PropertyOptions quick = popt;  // the candidates' error_inputs probes are not named one by one
  quick.name_probes = false;
  auto still_fails = [&](const Case& cand) {
    if (!checked_as_is(cand)) return false;
    Verdict v = check_property(property, impl, cand, quick);
    if (stop && stop()) return false;  // (the shrinker drops it too; `last` must stay the minimal's)
    if (v.passed || v.vacuous != original.vacuous || !shares_an_output(original, v)) return false;
    if (claimed && !breaks_claim(v, impl.contract, cand.dtype)) return false;
    last = std::move(v);
    return true;
  };
  ShrinkResult r = shrink_case_with(start, still_fails, log, max_seconds, 0, stop);
  // the minimal case's probes named
  r.verdict = stop && stop() ? std::move(last) : with_probes_named(std::move(last), property, impl, r.minimal, popt);
  return r;
}

}  // namespace gatecheck
