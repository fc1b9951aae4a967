// Index patterns: the named shapes of the index vector (case_spec.h).
#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "gen_detail.h"
#include "case_spec.h"

namespace gatecheck {

using gen_detail::cuts;

namespace {

// Distinct gates for n segments, ascending, spread over [0, gates).
std::vector<int64_t> ascending_gates(int64_t n, int64_t gates, Prng& rng) {
  std::vector<int64_t> all(static_cast<size_t>(gates));
  std::iota(all.begin(), all.end(), 0);
  for (int64_t i = 0; i < n && i < gates; ++i) std::swap(all[size_t(i)], all[size_t(i + rng.below(gates - i))]);
  all.resize(size_t(std::min(n, gates)));
  std::sort(all.begin(), all.end());
  return all;
}

std::vector<int64_t> sorted_segments(int64_t rows, int64_t gates, bool equal, Prng& rng) {
  std::vector<int64_t> idx(size_t(rows), 0);
  const int64_t n = std::min(gates, std::max<int64_t>(rows, 1));
  const int64_t segs = equal ? n : rng.range(1, n);
  const auto c = cuts(rows, segs, equal, rng);
  const auto g = ascending_gates(int64_t(c.size()) - 1, gates, rng);
  for (size_t s = 0; s + 1 < c.size(); ++s)
    for (int64_t r = c[s]; r < c[s + 1]; ++r) idx[size_t(r)] = g[std::min(s, g.size() - 1)];
  return idx;
}

}  // namespace

std::vector<int64_t> make_index(const std::string& pattern, int64_t rows, int64_t gates, uint64_t seed) {
  Prng rng(seed);
  std::vector<int64_t> idx(size_t(std::max<int64_t>(rows, 0)), 0);
  if (rows <= 0 || gates <= 0) return idx;
  if (pattern == "single_gate") {
    std::fill(idx.begin(), idx.end(), rng.below(gates));
  } else if (pattern == "identity") {
    for (int64_t r = 0; r < rows; ++r) idx[size_t(r)] = r % gates;
  } else if (pattern == "sorted_equal" || pattern == "sorted_random") {
    idx = sorted_segments(rows, gates, pattern == "sorted_equal", rng);
  } else if (pattern == "reversed") {
    idx = sorted_segments(rows, gates, rng.chance(0.5), rng);
    for (auto& k : idx) k = gates - 1 - k;
  } else if (pattern == "uniform") {
    for (auto& k : idx) k = rng.below(gates);
  } else if (pattern == "giant_plus_tiny") {
    // tiny segments of 1-2 rows around one giant segment of about 3/4 of the rows
    const int64_t giant_len = std::max<int64_t>(1, rows * 3 / 4);
    const int64_t giant_at = rng.range(0, rows - giant_len);
    const int64_t giant = rng.below(gates);
    int64_t r = 0;
    while (r < rows) {
      if (r == giant_at) {
        for (int64_t i = 0; i < giant_len; ++i) idx[size_t(r++)] = giant;
        continue;
      }
      const int64_t len = std::min<int64_t>(rng.range(1, 2), (r < giant_at ? giant_at : rows) - r);
      const int64_t k = rng.below(gates);
      for (int64_t i = 0; i < len; ++i) idx[size_t(r++)] = k;
    }
  } else if (pattern == "unused_gates") {
    // a random strict subset of the gates (at least one left unused when gates > 1)
    const int64_t used = std::max<int64_t>(1, gates > 1 ? rng.range(1, gates - 1) : 1);
    const auto pool = ascending_gates(used, gates, rng);
    for (auto& k : idx) k = pool[size_t(rng.below(int64_t(pool.size())))];
  } else if (pattern == "h3_shared") {
    // one index of length S (a divisor of rows) shared by rows/S sequences
    std::vector<int64_t> divisors;
    for (int64_t s = 1; s <= rows; ++s)
      if (rows % s == 0) divisors.push_back(s);
    const int64_t S = divisors[size_t(rng.below(int64_t(divisors.size())))];
    const auto shared = sorted_segments(S, gates, rng.chance(0.5), rng);
    const Status st = expand_shared_index(shared, rows, &idx);
    if (!st.ok()) throw std::logic_error("h3_shared: " + st.message);
  } else if (pattern == "max_index_heavy") {
    for (auto& k : idx) k = rng.chance(0.8) ? gates - 1 : rng.below(gates);
  } else {
    throw std::invalid_argument("unknown index pattern '" + pattern + "'");
  }
  return idx;
}


namespace gen_detail {

// Cuts [0, rows) into `n` contiguous segments, random (or equal) lengths >= 1
// when rows >= n. Returns segment starts plus rows at the end.
std::vector<int64_t> cuts(int64_t rows, int64_t n, bool equal, Prng& rng) {
  n = std::max<int64_t>(1, std::min(n, std::max<int64_t>(rows, 1)));
  std::vector<int64_t> c = {0};
  if (equal) {
    for (int64_t i = 1; i < n; ++i) c.push_back(rows * i / n);
  } else {
    std::vector<int64_t> pts;
    for (int64_t i = 1; i < rows; ++i) pts.push_back(i);
    for (int64_t i = 0; i < n - 1 && i < int64_t(pts.size()); ++i) std::swap(pts[size_t(i)], pts[size_t(i + rng.below(int64_t(pts.size()) - i))]);
    pts.resize(size_t(std::min<int64_t>(n - 1, int64_t(pts.size()))));
    std::sort(pts.begin(), pts.end());
    c.insert(c.end(), pts.begin(), pts.end());
  }
  c.push_back(rows);
  return c;
}

}  // namespace gen_detail

}  // namespace gatecheck
