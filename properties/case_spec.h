// Large cases kept as a generator spec and a seed instead of explicit values.
// The generator here is the project's own (splitmix64), so a spec replays
// identically whatever RapidCheck version is installed.
#pragma once

#include <cstdint>
#include <string>

#include "case.h"

namespace gatecheck {

struct CaseSpec {
  DType dtype = DType::bf16;
  int64_t rows = 0, dim = 0, gates = 1;
  std::string index = "sorted";   // sorted | random | identity | single | reversed
  std::string values = "normal";  // normal (gate x 0.1) | small_int
  uint64_t seed = 0;
};

// Throws std::invalid_argument naming a bad field.
Case case_from_spec(const CaseSpec& s);

}  // namespace gatecheck
