#include "mutant_implementations.h"

#include "mutants.h"

namespace gatecheck {

namespace {
std::vector<Subject> wrap(const std::vector<mutants::MutantInfo>& list) {
  std::vector<Subject> v;
  for (const auto& m : list) {
    Subject impl;
    impl.api = m.plugin();
    impl.name = impl.api->name;
    impl.device = Device::cpu;
    impl.contract = Contract::everything();
    v.push_back(impl);
  }
  return v;
}
}  // namespace

std::vector<Subject> planted_mutants() { return wrap(mutants::mutant_catalog()); }
std::vector<Subject> correct_alternatives() { return wrap(mutants::alternative_catalog()); }

}  // namespace gatecheck
