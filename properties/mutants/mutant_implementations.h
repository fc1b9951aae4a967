// The mutants and alternatives as harness Implementations (device cpu,
// claiming the default property set), ready for run_check or check_property.
#pragma once

#include <vector>

#include "../catalog/contract.h"

namespace gatecheck {

// One per bug class, named "mutant:<class>".
std::vector<Subject> planted_mutants();
// The correct alternatives, named "alt:<name>"; they must pass everything claimed.
std::vector<Subject> correct_alternatives();
// rmsnorm_modulate's planted mutants ("mutant:rms-<class>") and its correct
// control ("alt:rms-twin"), each of that op.
std::vector<Subject> planted_rmsnorm_modulate_mutants();
std::vector<Subject> correct_rmsnorm_modulate_alternatives();

}  // namespace gatecheck
