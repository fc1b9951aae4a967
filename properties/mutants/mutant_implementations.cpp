#include "mutant_implementations.h"

#include "mutants.h"
#include "../../kernels/rmsnorm_modulate.h"

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
std::vector<Subject> wrap(const std::vector<mutants::OpMutantInfo>& list, const OpSchema& op) {
  std::vector<Subject> v;
  for (const auto& m : list) {
    Subject impl;
    impl.api2 = m.plugin();
    impl.name = impl.api2->name;
    impl.device = Device::cpu;
    impl.op = &op;
    impl.contract = Contract::everything(op);
    v.push_back(impl);
  }
  return v;
}
}  // namespace

std::vector<Subject> planted_rmsnorm_modulate_mutants() {
  return wrap(mutants::rmsnorm_modulate_mutant_catalog(), rmsnorm_modulate_schema());
}
std::vector<Subject> correct_rmsnorm_modulate_alternatives() {
  return wrap(mutants::rmsnorm_modulate_alternative_catalog(), rmsnorm_modulate_schema());
}

std::vector<Subject> planted_mutants() { return wrap(mutants::mutant_catalog()); }
std::vector<Subject> correct_alternatives() { return wrap(mutants::alternative_catalog()); }

}  // namespace gatecheck
