// Small helpers shared by the spec's synthesis (index patterns, batch plans)
// and the case shrinks (properties/case_shrinks.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "prng.h"

namespace gatecheck::gen_detail {

// Cuts [0, rows) into `n` contiguous segments, random (or equal) lengths >= 1
// when rows >= n. Returns segment starts plus rows at the end.
std::vector<int64_t> cuts(int64_t rows, int64_t n, bool equal, Prng& rng);
// a, a+1, ..., b-1
std::vector<int64_t> iota_rows(int64_t a, int64_t b);
void shuffle(std::vector<int64_t>& v, Prng& rng);

}  // namespace gatecheck::gen_detail
