// An operator report's fields (RL-Kernel's h3_operator_report, as its
// rmsnorm report has them: ../shared/reference/h3_rmsnorm_b200.json; a copy
// in bench/reference/) for one implementation, from what the sweep measured:
// rows batch-invariant, the backward repeatable, the outputs bitwise equal to
// the eager composition, the op's plain part bitwise equal to its library op
// (sweep_plain.h), each output's error against float64, and latency by size. Written for an op whose prior art is an operator report
// (OpSchema::prior_art_operator_report), beside the seed report's fields.
#pragma once

#include <nlohmann/json.hpp>

#include "sweep.h"

namespace gatecheck {

nlohmann::json operator_report_json(const SweepImplResult& r, const OpSchema& op);

}  // namespace gatecheck
