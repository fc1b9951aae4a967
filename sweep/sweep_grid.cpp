// The prior art's grids (sweep_grid.h). Every rule here is the one its
// report was made with; the comments give the full grid's numbers.
#include "sweep_grid.h"

#include <algorithm>
#include <set>
#include <string>

namespace gatecheck {

SweepGrid full_grid(const OpSchema& op) {
  SweepGrid g;
  g.op = &op;
  g.accuracy_rows = op.prior_art_rows;
  return g;
}

namespace {
// "4097 -> 257, 32768 -> 2048" for the quick grid's words.
std::string scaled_rows(const std::vector<int64_t>& full, const std::vector<int64_t>& quick) {
  std::string s;
  for (size_t i = 0; i < full.size() && i < quick.size(); ++i)
    s += (i ? ", " : "") + std::to_string(full[i]) + " -> " + std::to_string(quick[i]);
  return s;
}
}  // namespace

SweepGrid quick_grid(const OpSchema& op) {
  SweepGrid g = full_grid(op);
  g.quick = true;
  // The prior art's own --quick for batch invariance: full batches of 17 and
  // 64 rows (the sweep over 64), and a 256-row batch against sub-batches of
  // 1, 7 and 64 rows, every one of them (the step rule gives max(size, 0)).
  g.full_batches = {17, 64};
  g.big_batch = 256;
  g.sub_batch_sizes = {1, 7, 64};
  // Ours: accuracy and latency at rows / 16 (rounded up: 257 and 2048) and
  // dim / 16 (336) everywhere, and a quarter of the timed runs, so that CPU
  // implementations finish in seconds. Seeds, gates and dtype are the full grid's.
  g.dim = 5376 / 16;
  g.accuracy_dim = 5376 / 16;
  std::vector<int64_t> rows;
  for (int64_t r : g.accuracy_rows) rows.push_back((r + 15) / 16);
  const std::string scaled = scaled_rows(g.accuracy_rows, rows);
  g.accuracy_rows = rows;
  g.warmup = 5;
  g.reps = 25;
  g.quick_scaling =
      "batch invariance: the prior art's own --quick (full batches of 17 and 64 rows, the batch-size sweep over "
      "64; a 256-row batch against every contiguous sub-batch of 1, 7 and 64 rows); accuracy and latency at "
      "rows/16 rounded up (" + scaled + "); dim/16 (5376 -> 336) everywhere; latency medians of 25 "
      "timed runs after 5 warm-ups (the full grid: 100 after 20); seeds, 9 gates and bf16 as in the full grid";
  return g;
}

std::vector<RowRange> sub_batches(int64_t big, int64_t size) {
  std::vector<RowRange> v;
  if (size <= 0 || big <= 0) return v;
  const int64_t step = size >= 1024 ? size : std::max(size, big / 512);
  for (int64_t start = 0; start < big; start += step) v.push_back({start, std::min(size, big - start)});
  return v;
}

std::vector<int64_t> sweep_batch_sizes(int64_t n) {
  std::set<int64_t> sizes;
  for (int64_t m = 1; m <= std::min<int64_t>(n, 9); ++m) sizes.insert(m);
  for (int64_t k = 16; k <= n; k *= 2)
    for (int64_t m : {k - 1, k, k + 1})
      if (m <= n) sizes.insert(m);
  if (n >= 1) sizes.insert(n);
  return {sizes.begin(), sizes.end()};
}

std::vector<int64_t> probe_rows(int64_t n) {
  std::set<int64_t> probes;
  if (n <= 0) return {};
  probes.insert(0);
  probes.insert(n - 1);
  const int64_t step = n / 8;
  int taken = 0;
  for (int64_t r = step + 3; step > 0 && r < n - 1 && taken < 6; r += step, ++taken) probes.insert(r);
  return {probes.begin(), probes.end()};
}

std::vector<int64_t> probe_positions(int64_t m) {
  std::set<int64_t> at{0, (m - 1) / 2, m - 1};
  return {at.begin(), at.end()};
}

SweepCounts expected_counts(const SweepGrid& g) {
  SweepCounts c;
  for (int64_t n : g.full_batches) c.all_rows_rows.push_back(int64_t(g.seeds.size()) * n);
  for (int64_t s : g.sub_batch_sizes) c.sub_batches += int64_t(sub_batches(g.big_batch, s).size());
  c.sub_batches *= int64_t(std::min(g.sub_batch_seeds, g.seeds.size()));
  const int64_t n = g.full_batches.empty() ? 0 : g.full_batches.back();
  const int64_t probes = int64_t(probe_rows(n).size());
  int64_t per_seed = probes;  // each probe once in the whole batch reversed
  for (int64_t m : sweep_batch_sizes(n)) per_seed += probes * int64_t(probe_positions(m).size());
  c.comparisons = per_seed * int64_t(g.seeds.size());
  return c;
}

}  // namespace gatecheck
