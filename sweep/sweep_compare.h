// --compare: another report's numbers beside ours, field by field (the
// seed's fields), with every verdict that differs marked. The other report is
// the seed's (h3_prior_art_b200.json) or an earlier sweep. Implementations
// pair by name; the seed's rows pair with ours by what they are: its
// "diffusers" (torch eager) with torch-eager and the diffusers_eager peer,
// its "rl_kernel" (a CUDA kernel made for this op) with cuda and the
// gatecheck_op peer. An operator report (h3_operator_report, as RL-Kernel's
// rmsnorm report) pairs its "provider" (torch eager) with torch-eager and its
// "cuda" (the candidate kernel) with cuda, field by field in its own form
// (sweep_compare_operator.cpp).
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "../kernels/op_schema.h"

namespace gatecheck {

// The "kind" of RL-Kernel's operator reports.
inline constexpr const char* kOperatorReportKind = "h3_operator_report";

// The "compare" block of our report.
nlohmann::json compare_reports(const nlohmann::json& ours, const nlohmann::json& theirs, const std::string& their_path);

// The same against an operator report (compare_reports calls it for one).
nlohmann::json compare_operator_report(const nlohmann::json& ours, const nlohmann::json& theirs,
                                       const std::string& their_path, const OpSchema& op);

// The block as a table on the terminal.
void print_comparison(std::ostream& os, const nlohmann::json& cmp);

}  // namespace gatecheck
