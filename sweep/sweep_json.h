// The sweep's report as JSON: the seed report's schema
// (../shared/reference/h3_prior_art_b200.json; a copy in bench/reference/)
// field for field under results.plain.<implementation>, and gatecheck's
// additions in a block of their own, "gatecheck", beside the seed's fields.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "sweep.h"

namespace gatecheck {

// What this machine is: GPU, driver, CUDA, LibTorch, CPU, the commit (what
// is knowable; null where not).
nlohmann::json sweep_environment();

nlohmann::json sweep_report_json(const SweepRun& run, const nlohmann::json& environment, const std::string& command);

// What each timing figure means, as the report says it.
nlohmann::json sweep_timing_words();

}  // namespace gatecheck
