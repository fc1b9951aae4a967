// --compare: another report's numbers beside ours, field by field (the
// seed's fields), with every verdict that differs marked. The other report is
// the seed's (h3_prior_art_b200.json) or an earlier sweep. Implementations
// pair by name; the seed's rows pair with ours by what they are: its
// "diffusers" (torch eager) with torch-eager and the diffusers_eager peer,
// its "rl_kernel" (a CUDA kernel made for this op) with cuda and the
// gatecheck_op peer.
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

namespace gatecheck {

// The "compare" block of our report.
nlohmann::json compare_reports(const nlohmann::json& ours, const nlohmann::json& theirs, const std::string& their_path);

// The block as a table on the terminal.
void print_comparison(std::ostream& os, const nlohmann::json& cmp);

}  // namespace gatecheck
