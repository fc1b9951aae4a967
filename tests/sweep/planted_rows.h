// Rows of random bytes with planted differences, and the row helpers run on
// either device, for the sweep's device tests.
#pragma once

#include <cstdint>
#include <vector>

#include "case/prng.h"
#include "harness/run/device_rows.h"

namespace gatecheck {
namespace {

// rows x row_bytes of random bytes, and a copy with planted differences:
// row r differs first at byte want[r] (-1: identical).
struct Planted {
  std::vector<uint8_t> a, b;
  std::vector<int64_t> want;
};
Planted planted(int64_t rows, size_t row_bytes, uint64_t seed) {
  Prng rng(seed);
  Planted p;
  p.a.resize(size_t(rows) * row_bytes);
  for (auto& x : p.a) x = uint8_t(rng.below(256));
  p.b = p.a;
  for (int64_t r = 0; r < rows; ++r) {
    p.want.push_back(rng.chance(0.5) ? int64_t(rng.below(int64_t(row_bytes))) : -1);
    if (p.want.back() < 0) continue;
    const size_t at = size_t(r) * row_bytes + size_t(p.want.back());
    p.b[at] ^= uint8_t(1 + rng.below(255));
    // later bytes of the row may differ too: the first one counts
    for (size_t k = size_t(p.want.back()) + 1; k < row_bytes; ++k)
      if (rng.chance(0.1)) p.b[size_t(r) * row_bytes + k] ^= 0x80;
  }
  return p;
}

std::vector<int64_t> differ_on(Device d, const Planted& p, int64_t rows, size_t row_bytes) {
  DeviceBytes a(d, p.a.size()), b(d, p.b.size());
  a.upload(p.a.data(), p.a.size());
  b.upload(p.b.data(), p.b.size());
  return first_differing_bytes(d, a.get(), b.get(), rows, row_bytes);
}

std::vector<uint8_t> gather_on(Device d, const std::vector<uint8_t>& src, const std::vector<int64_t>& rows,
                               size_t row_bytes) {
  DeviceBytes s(d, src.size()), out(d, rows.size() * row_bytes);
  s.upload(src.data(), src.size());
  gather_rows(d, out.get(), s.get(), rows, row_bytes);
  std::vector<uint8_t> host(out.size());
  out.download(host.data(), host.size());
  return host;
}

// Row widths that take each word width (16, 8, 4, 2 and 1 bytes).
const size_t kRowBytes[] = {10752, 672, 40, 12, 6, 7};

}  // namespace
}  // namespace gatecheck
