// FNV-1a, 64-bit: a hash that is the same on every machine and run, for case
// digests, the per-property random streams and names in file names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gatecheck {

constexpr uint64_t kFnv1aOffset = 1469598103934665603ull;

inline uint64_t fnv1a(const void* p, size_t n, uint64_t h = kFnv1aOffset) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}
inline uint64_t fnv1a(const std::string& s, uint64_t h = kFnv1aOffset) { return fnv1a(s.data(), s.size(), h); }

}  // namespace gatecheck
