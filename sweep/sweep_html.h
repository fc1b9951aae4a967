// --html: the sweep's report as one self-contained page (inline CSS and SVG,
// nothing fetched): the verdict table with the implementations as columns,
// the seed's fields, charts of latency and of error against rows (the
// compared report's figures beside ours), and every saved failure's repro
// command.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace gatecheck {

// `report` is sweep_report_json's, with its "compare" block when there is one.
std::string sweep_html(const nlohmann::json& report);

}  // namespace gatecheck
