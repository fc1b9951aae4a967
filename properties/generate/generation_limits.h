// The generator's limits for one subject: the run's limits (--max-rows,
// --min-dim, ...) within its contract's valid inputs, so that every case
// generated for it is one its contract accepts.
#pragma once

#include "../catalog/contract.h"
#include "generators.h"

namespace gatecheck {

// Throws std::invalid_argument when the two leave no shape to generate
// ("dim>=8 of python:m:f's contract is above --max-dim 4").
GenLimits generation_limits(const Subject& s, const GenLimits& run);

}  // namespace gatecheck
