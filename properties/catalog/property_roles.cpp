#include "property_roles.h"

#include <stdexcept>

#include "property_checks.h"

namespace gatecheck {

const PropertyInfo& invariance_property(OutputKind k) {
  for (const auto& p : property_catalog())
    if (p.reads == Reads::kinds && p.plans != PlanNeed::split && p.kinds.size() == 1 && p.kinds[0] == k) return p;
  throw std::logic_error(std::string("no property compares ") + output_kind_name(k) + " outputs across batch plans");
}

const PropertyInfo& repeat_property() {
  for (const auto& p : property_catalog())
    if (p.reads == Reads::every_output && p.flaky_failures && p.plans == PlanNeed::none) return p;
  throw std::logic_error("no property compares repeated runs");
}

const PropertyInfo& split_property() {
  for (const auto& p : property_catalog())
    if (p.plans == PlanNeed::split) return p;
  throw std::logic_error("no property compares row reductions combined over a split");
}

bool judged_against_reference(const std::string& property) {
  const PropertyInfo* p = find_property(property);
  return p && (p->reads == Reads::eager_outputs || p->check == checks::accuracy);
}

}  // namespace gatecheck
