// Custom fuzzer features through libFuzzer's extra counters: which shape
// class, index pattern, value class, dtype and plan a case had, and how close
// each output came to its error bound. They guide the search on the GPU too,
// where device code carries no coverage instrumentation. In replay builds the
// counters are plain memory nobody reads.
#pragma once

#include <cstdint>

#include "case_decoder.h"

namespace gatecheck::fuzz {

// Marks the case-class features of one decoded case.
void note_case_features(const Case& c, const DecodeInfo& info);

// Marks a bucket of max |err|/bound (0 = exact ... 15 = over the bound) for
// output o (0..7) of implementation slot `impl` (0..3).
void note_error_feature(int impl, int output, double err_over_bound);
int error_bucket(double err_over_bound);

}  // namespace gatecheck::fuzz
