// split_invariance at scale: a scale case of many rows, wide rows or many
// gates, split into up to 64 parts (contiguous micro-batches, rows dealt to
// ranks in turn, or each row in a random rank), checked by the small-case
// property on the case made explicit (materialise): the parts' partials go
// through the implementation's declared exchange, else the framework's fp32
// sum in rank order, on the implementation's device. The draw keeps such
// cases within kMaxMaterialiseElements a tensor (scale_tier.cpp), so that
// the check holds the values, the parts and their outputs on the host.
#include <stdexcept>

#include "../catalog/property_checks.h"
#include "scale_check_detail.h"
#include "scale_properties.h"

namespace gatecheck::checks {

Verdict scale_split_invariance(const Implementation& impl, const ScaleCase& c, const ScaleCheckOptions&) {
  if (c.elements() > kMaxMaterialiseElements)
    throw std::invalid_argument("split_invariance at scale: " + describe(c) + " has " + std::to_string(c.elements()) +
                                " elements a row tensor, more than the " + std::to_string(kMaxMaterialiseElements) +
                                " its check holds on the host");
  const Case m = materialise(c);  // its plan (a split) is the scale case's
  Verdict v = split_invariance(impl, m, PropertyOptions{});
  if (!v.passed && !v.vacuous) v.message = scale_detail::head(impl, c) + v.message;
  return v;
}

}  // namespace gatecheck::checks
