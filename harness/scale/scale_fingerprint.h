// A row's fingerprint: the wrapping sum over its columns of a hash of (bits,
// column). Integer addition in any order gives the same sum, so the device
// reduces a row in parallel and the host in a loop and both agree; two rows
// with different bits collide with probability about 2^-64. The invariance
// and repeatability checks at scale compare fingerprints (8 bytes a row)
// instead of keeping copies of whole outputs.
#pragma once

#include <cstdint>

#include "../../case/scale_values.h"

namespace gatecheck {

GC_HD uint64_t scale_print_term(uint32_t bits, int64_t col) {
  return scale_mix((uint64_t(bits) << 32) ^ uint64_t(col) ^ 0x2545f4914f6cdd1dull);
}

}  // namespace gatecheck
