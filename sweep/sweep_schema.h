// Does a report follow the seed report's schema, with the counts its grid
// must give (the full grid: all_rows rows = 3n, 2124 sub-batches, 2256
// comparisons)? Applies to the seed report itself, to every sweep's own
// report before it is written, and to any report given to --compare. An
// operator report (RL-Kernel's h3_operator_report) is checked in its own form.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gatecheck {

// Each problem as "path: what is wrong"; empty when the report conforms.
// The grid is the full one, or --quick's where the report says "quick": true.
std::vector<std::string> sweep_schema_problems(const nlohmann::json& report);

}  // namespace gatecheck
