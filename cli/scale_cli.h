// The scale tier in the command line (properties/scale_tier.h): options,
// the header line, coverage lines, and failures saved and replayed as files
// (values where small, the generator spec where large).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "../case/case_json.h"
#include "../properties/engine/check_engine.h"
#include "cli.h"

namespace gatecheck {

// --scale-share, --scale-memory-gib and --stop-on-failure into opt (after
// opt->isolate is set: under --isolate the tier is off unless --scale-share
// says otherwise).
void configure_scale(const CheckArgs& a, CheckOptions* opt);
// "scale tier: 25% of each cuda budget, 15% of each cpu budget (--scale-share; docs/scale.md)"
std::string scale_header(const CheckOptions& opt, const std::vector<Subject>& impls);

// The in-flight file of a scale case (JSON: its spec and view).
void write_scale_inflight(const std::string& path, const Subject& impl, const std::string& property,
                          const ScaleCase& c, const std::string& repro);

void print_scale_coverage(std::ostream& os, const ScaleCoverage& c);
// The wide dims a tier drew (dim -> cases, dims of 1,000 and more):
// "3072 x4, 4099 x2, 8191 x3; past 4,096: 5 cases, 5 not a multiple of 8",
// or "none".
std::string wide_dims_text(const std::map<int64_t, int64_t>& dims);
// The same as JSON: {"by_dim": {"3072": 4, ...}, "past_4096": 5, "past_4096_not_multiple_of_8": 5}.
nlohmann::json wide_dims_json(const std::map<int64_t, int64_t>& dims);
nlohmann::json scale_coverage_json(const ScaleCoverage& c);

}  // namespace gatecheck
