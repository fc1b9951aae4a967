#include "mutant_implementations.h"

#include "mutants.h"

namespace gatecheck {

namespace {
std::vector<Implementation> wrap(const std::vector<mutants::MutantInfo>& list) {
  std::vector<Implementation> v;
  for (const auto& m : list) {
    Implementation impl;
    impl.api = m.plugin();
    impl.name = impl.api->name;
    impl.device = Device::cpu;
    impl.contract = Contract::everything();
    v.push_back(impl);
  }
  return v;
}
}  // namespace

std::vector<Implementation> planted_mutants() { return wrap(mutants::mutant_catalog()); }
std::vector<Implementation> correct_alternatives() { return wrap(mutants::alternative_catalog()); }

}  // namespace gatecheck
