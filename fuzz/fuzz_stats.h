// Counts of executed cases per index pattern, dtype, value class, plan and
// shape class, written as JSON to $GATECHECK_FUZZ_STATS every few seconds (a
// campaign's report sums them over workers).
#pragma once

#include "case_decoder.h"

namespace gatecheck::fuzz {

void count_case(const Case& c, const DecodeInfo& info);
void flush_stats();  // writes now (also done periodically by count_case)

}  // namespace gatecheck::fuzz
