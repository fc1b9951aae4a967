// Batch plans: how a case's rows are re-run to test invariance (case_spec.h).
#include <algorithm>
#include <stdexcept>

#include "gen_detail.h"
#include "case_spec.h"
#include "plan_movement.h"

namespace gatecheck {

using gen_detail::cuts;
using gen_detail::iota_rows;
using gen_detail::shuffle;

namespace {

// A shuffle that is not the identity (for >= 2 elements).
void derange(std::vector<int64_t>& v, Prng& rng) {
  if (v.size() < 2) return;
  const auto orig = v;
  shuffle(v, rng);
  if (v == orig) std::swap(v.front(), v.back());
}

// Contiguous sub-batches of `size` rows starting every `stride` rows.
void tile(BatchPlan& p, int64_t rows, int64_t size, int64_t stride) {
  for (int64_t s = 0; s < rows; s += stride) p.batches.push_back(iota_rows(s, std::min(rows, s + size)));
}

}  // namespace

BatchPlan make_plan(const std::string& kind, const Case& c, uint64_t seed, int64_t max_singletons) {
  Prng rng(seed);
  BatchPlan p;
  p.kind = kind;
  const int64_t n = c.rows;
  if (n <= 0) return p;
  if (kind == "singletons") {
    std::vector<int64_t> rows = iota_rows(0, n);
    if (n > max_singletons) {  // a sample, always with the first and last row
      shuffle(rows, rng);
      rows.resize(size_t(std::max<int64_t>(max_singletons, 2)));
      rows[0] = 0;
      rows[1] = n - 1;
      std::sort(rows.begin(), rows.end());
      rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    }
    for (int64_t r : rows) p.batches.push_back({r});
  } else if (kind == "partition") {
    const int64_t k = rng.range(std::min<int64_t>(2, n), std::min<int64_t>(n, 16));
    const auto c2 = cuts(n, k, false, rng);
    for (size_t s = 0; s + 1 < c2.size(); ++s) p.batches.push_back(iota_rows(c2[s], c2[s + 1]));
  } else if (kind == "reversal" || kind == "permutation") {
    auto all = iota_rows(0, n);
    const int64_t m = n > 1 ? rng.range(1, n - 1) : 1;  // a proper subset, so sizes differ too
    const int64_t start = rng.range(0, n - m);
    auto part = iota_rows(start, start + m);
    if (kind == "reversal") {
      std::reverse(all.begin(), all.end());
      std::reverse(part.begin(), part.end());
    } else {
      derange(all, rng);
      derange(part, rng);
    }
    p.batches = {all, part};
  } else if (kind == "probe") {
    // prior art: a probe row at the front, middle and back of a random batch
    // of other rows, and once in the whole batch reversed
    const int64_t probe = rng.below(n);
    std::vector<int64_t> others;
    for (int64_t r = 0; r < n; ++r)
      if (r != probe) others.push_back(r);
    shuffle(others, rng);
    others.resize(size_t(rng.range(std::min<int64_t>(1, int64_t(others.size())), int64_t(others.size()))));
    for (int where = 0; where < 3; ++where) {
      auto b = others;
      const size_t at = where == 0 ? 0 : where == 1 ? b.size() / 2 : b.size();
      b.insert(b.begin() + long(at), probe);
      p.batches.push_back(b);
    }
    auto rev = iota_rows(0, n);
    std::reverse(rev.begin(), rev.end());
    p.batches.push_back(rev);
  } else if (kind == "thresholds") {
    // 2^k-1, 2^k, 2^k+1 rows, contiguous at a random start (a few k's)
    std::vector<int64_t> sizes;
    for (int64_t s = 2; s - 1 <= n; s *= 2)
      for (int64_t d : {-1, 0, 1})
        if (s + d >= 1 && s + d <= n && s + d != n) sizes.push_back(s + d);
    if (sizes.empty()) sizes.push_back(1);
    shuffle(sizes, rng);
    sizes.resize(std::min<size_t>(sizes.size(), 6));
    for (int64_t s : sizes) {
      const int64_t start = rng.range(0, n - s);
      p.batches.push_back(iota_rows(start, start + s));
    }
  } else if (kind == "prior_art") {
    // The report's sub-batch sizes 1, 7, 4097, 32768, 65536 of a 131072-row
    // batch. Sizes not below the rows are scaled by rows/131072; 1 and 7 are
    // sampled, one sub-batch every n/8 rows (the report: every 256 rows).
    for (int64_t s : {int64_t(1), int64_t(7), int64_t(4097), int64_t(32768), int64_t(65536)}) {
      int64_t size = s < n ? s : std::max<int64_t>(1, s * n / 131072);
      if (size >= n) size = std::max<int64_t>(1, n - 1);
      const int64_t stride = s <= 7 ? std::max<int64_t>(size, n / 8) : size;
      tile(p, n, size, stride);
    }
  } else if (kind == "repeat") {
    // one batch drawing rows with repetition (a row at several offsets), and
    // whole-case reruns for `repeatable`
    const int64_t m = rng.range(2, std::max<int64_t>(2, std::min<int64_t>(n + 2, 64)));
    std::vector<int64_t> b;
    for (int64_t i = 0; i < m; ++i) b.push_back(rng.below(n));
    b.push_back(b.front());  // at least one repeat
    p.batches.push_back(b);
    p.repeats = int(rng.range(1, 3));
  } else if (kind == "gate_groups") {
    // used gates split into random groups; each batch = the group's rows in row order
    const auto by_gate = rows_by_gate(c);
    std::vector<int64_t> used;
    for (size_t k = 0; k < by_gate.size(); ++k)
      if (!by_gate[k].empty()) used.push_back(int64_t(k));
    shuffle(used, rng);
    const int64_t groups = used.size() > 1 ? rng.range(2, std::min<int64_t>(int64_t(used.size()), 8)) : 1;
    std::vector<std::vector<int64_t>> g(static_cast<size_t>(groups));
    for (size_t i = 0; i < used.size(); ++i) g[i % size_t(groups)].push_back(used[i]);
    for (auto& grp : g) {
      std::vector<int64_t> b;
      for (int64_t k : grp) b.insert(b.end(), by_gate[size_t(k)].begin(), by_gate[size_t(k)].end());
      std::sort(b.begin(), b.end());
      if (!b.empty()) p.batches.push_back(b);
    }
  } else if (kind == "micro_batches" || kind == "strided" || kind == "ranks") {
    // Splits (split_invariance): disjoint parts covering every row, 2 to 64
    // of them. micro_batches: contiguous, of equal size but the last, as
    // gradient accumulation and a sharded batch make them; strided: row r in
    // part r mod k, as a distributed sampler deals them; ranks: each row in a
    // random part (each part's rows in row order).
    const int64_t k = rng.range(std::min<int64_t>(2, n), std::min<int64_t>(n, kMaxSplitParts));
    p.batches.assign(size_t(k), {});
    const int64_t size = (n + k - 1) / k;
    for (int64_t r = 0; r < n; ++r) {
      const int64_t part = kind == "micro_batches" ? r / size : kind == "strided" ? r % k : rng.below(k);
      p.batches[size_t(part)].push_back(r);
    }
    p.batches.erase(std::remove_if(p.batches.begin(), p.batches.end(), [](const auto& b) { return b.empty(); }),
                    p.batches.end());
    if (p.batches.size() == 1 && n >= 2) {  // all in one: give the last row a part of its own
      p.batches[0].pop_back();
      p.batches.push_back({n - 1});
    }
  } else {
    throw std::invalid_argument("unknown plan kind '" + kind + "'");
  }
  return p;
}

const std::vector<std::string>& split_plan_kinds() {
  static const std::vector<std::string> v = {"micro_batches", "strided", "ranks"};
  return v;
}

bool is_split_kind(const std::string& kind) {
  const auto& v = split_plan_kinds();
  return std::find(v.begin(), v.end(), kind) != v.end();
}

BatchPlan default_split(const Case& c) {
  BatchPlan p;
  p.kind = "micro_batches";
  if (c.rows >= 2) p.batches = {iota_rows(0, c.rows / 2), iota_rows(c.rows / 2, c.rows)};
  else if (c.rows == 1) p.batches = {{0}};
  return p;
}

BatchPlan default_plan(const Case& c) {
  // Halves, first/middle/last row alone, the whole batch reversed, and one
  // batch per half of the used gates (whole segments, for segment invariance).
  BatchPlan p;
  p.kind = "default";
  const int64_t n = c.rows;
  if (n <= 0) return p;
  if (n >= 2) {
    p.batches.push_back(iota_rows(0, n / 2));
    p.batches.push_back(iota_rows(n / 2, n));
  }
  for (int64_t r : {int64_t(0), n / 2, n - 1})
    if (p.batches.empty() || p.batches.back() != std::vector<int64_t>{r}) p.batches.push_back({r});
  auto rev = iota_rows(0, n);
  std::reverse(rev.begin(), rev.end());
  p.batches.push_back(rev);
  const auto by_gate = rows_by_gate(c);
  std::vector<int64_t> even, odd;
  int64_t used = 0;
  for (size_t k = 0; k < by_gate.size(); ++k) {
    if (by_gate[k].empty()) continue;
    auto& dst = (used++ % 2 == 0) ? even : odd;
    dst.insert(dst.end(), by_gate[k].begin(), by_gate[k].end());
  }
  for (auto* b : {&even, &odd})
    if (!b->empty() && int64_t(b->size()) < n) {
      std::sort(b->begin(), b->end());
      p.batches.push_back(*b);
    }
  return p;
}


namespace gen_detail {

std::vector<int64_t> iota_rows(int64_t a, int64_t b) {
  std::vector<int64_t> v;
  for (int64_t r = a; r < b; ++r) v.push_back(r);
  return v;
}

void shuffle(std::vector<int64_t>& v, Prng& rng) {
  for (int64_t i = int64_t(v.size()) - 1; i > 0; --i) std::swap(v[size_t(i)], v[size_t(rng.below(i + 1))]);
}

}  // namespace gen_detail

}  // namespace gatecheck
