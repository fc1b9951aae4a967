// What `gatecheck check` prints and writes: the implementation x property
// table, each failure's evidence and repro command, coverage, and the JSON.
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "../findings/failure_files.h"
#include "../properties/engine/check_engine.h"

namespace gatecheck {

void print_table(std::ostream& os, const CheckReport& r, const std::vector<Subject>& impls);
// generator_flags: the run's generator options ("--max-rows N ..."), which a
// RapidCheck replay (RC_PARAMS="reproduce=...") must repeat; "" for none.
void print_failures(std::ostream& os, const CheckReport& r, const SavedFailures& saved,
                    const std::string& generator_flags = "");
void print_coverage(std::ostream& os, const Coverage& c);
// `replays`: the pairs replayed from RC_PARAMS="reproduce=..." (rc_params_replays);
// when there are any, "seed" is null (the run used none) and "replay_of" lists them.
// `limits`: the generator's, recorded as "generator" (a seed replays only with them).
nlohmann::json report_json(const CheckReport& r, const SavedFailures& saved, const std::vector<Subject>& impls,
                           const std::vector<std::string>& replays, const GenLimits& limits);

}  // namespace gatecheck
