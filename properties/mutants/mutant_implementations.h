// The mutants and alternatives as harness Implementations (device cpu,
// claiming the default property set), ready for run_check or check_property.
#pragma once

#include <vector>

#include "../../harness/implementation.h"

namespace gatecheck {

// One per bug class, named "mutant:<class>".
std::vector<Implementation> planted_mutants();
// The correct alternatives, named "alt:<name>"; they must pass everything claimed.
std::vector<Implementation> correct_alternatives();

}  // namespace gatecheck
