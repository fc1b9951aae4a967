// The prior art's fixed grids (../shared/reference/PRIOR_ART.md, "How the
// report's fields are computed"), as data: which batches `gatecheck sweep`
// runs for each field of the seed report, and how many comparisons that
// makes. Pure functions of the grid, so the counts can be checked without
// running anything (the full grid: 2124 sub-batches, 2256 comparisons,
// rows = 3n).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../kernels/gate_residual.h"
#include "../kernels/op_schema.h"

namespace gatecheck {

struct SweepGrid {
  const OpSchema* op = &gate_residual_schema();  // its tensors and outputs come from the op catalog
  bool quick = false;
  DType dtype = DType::bf16;
  int64_t dim = 5376, gates = 9;
  std::vector<uint64_t> seeds{3, 4, 5};          // all_rows, params_repeatable, batch_size_sweep
  std::vector<int64_t> full_batches{64, 257, 2048};  // all_rows; the last is the sweep's batch
  int64_t big_batch = 131072;                    // full_vs_sub_batches, with the first two seeds
  std::vector<int64_t> sub_batch_sizes{1, 7, 4097, 32768, 65536};
  size_t sub_batch_seeds = 2;
  std::vector<int64_t> accuracy_rows{4097, 32768};  // the op's prior_art_rows
  int64_t accuracy_dim = 5376;
  uint64_t accuracy_seed = 11;
  int warmup = 20, reps = 100;                   // latency: medians of reps after warmup
  std::string quick_scaling;                     // how --quick differs, in words ("" when full)
};

// The prior art's grid for an op, and --quick's (quick_scaling says what
// changed). Every op shares the batch-invariance grid; accuracy and latency
// are at the sizes of the op's own prior-art report.
SweepGrid full_grid(const OpSchema& op = gate_residual_schema());
SweepGrid quick_grid(const OpSchema& op = gate_residual_schema());

// A contiguous sub-batch [start, start + rows) of the big batch.
struct RowRange {
  int64_t start = 0, rows = 0;
};

// Sub-batches of `size` rows: contiguous, one starting every `size` rows for
// sizes of 1024 and more (the last one shorter), else every max(size,
// big/512) rows (for the full grid: every 256 rows).
std::vector<RowRange> sub_batches(int64_t big, int64_t size);

// Batch sizes 1..min(n, 9), 2^k-1, 2^k, 2^k+1 for 2^k = 16.. while <= n, and n.
std::vector<int64_t> sweep_batch_sizes(int64_t n);
// 0, n-1, and the first six of n/8+3, n/8+3+n/8, ... below n-1.
std::vector<int64_t> probe_rows(int64_t n);
// Where a probe sits in a batch of m rows: front, middle, back (distinct).
std::vector<int64_t> probe_positions(int64_t m);

// The counts a run of the grid must produce.
struct SweepCounts {
  std::vector<int64_t> all_rows_rows;  // per full batch: seeds x n
  int64_t sub_batches = 0;             // full_vs_sub_batches, every seed
  int64_t comparisons = 0;             // batch_size_sweep, every seed
};
SweepCounts expected_counts(const SweepGrid& g);

}  // namespace gatecheck
