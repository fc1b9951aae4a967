// The campaign report: reads what fuzz/nightly.sh leaves in DIR
// (campaign.json, timeline.tsv, stats/*.json, failures.jsonl) and writes
// DIR/report.json, DIR/report.md and DIR/report.html (charts as inline SVG).
#pragma once

#include <string>

namespace gatecheck::fuzz {

// Returns 0, or 2 when DIR is not a campaign folder.
int write_campaign_report(const std::string& dir);

}  // namespace gatecheck::fuzz
