// rmsnorm_modulate's reduction orders, shared by the CUDA kernels and the
// host twin so that both compute the same bits (the orders are the contract;
// each side's code is its own).
//
// A row statistic (sum_j x^2 forward and backward, sum_j w*d*x backward):
//   elements are grouped in chunks of V (16 bytes: 4 f32, 8 f16/bf16); chunk c
//   goes to partial p = c mod T, T = rms_row_threads(dim, V) (fixed by dim
//   alone: never by rows, position or launch); each partial sums its elements
//   left to right from +0; the T partials are folded in warps of 32 by a
//   pairwise tree (a[i] += a[i + h], h = 16, 8, 4, 2, 1), and the T/32 warp
//   sums, padded with +0 to 32, by the same tree.
// dshift[k], dscale[k]: gate k's rows in batch order, cut into tiles of
//   kRmsSegTileRows; each tile sums left to right from +0, then the tiles in
//   order from +0. The cut depends on gate k's rows alone (segment invariant).
// dweight: the tiles of every gate in gate order, then tile order, cut into
//   groups of rms_tiles_per_group(...) tiles; each group sums its tiles' rows
//   in that order from +0, then the groups in order from +0.
#pragma once

#include <cstdint>

#include "gate_residual_dtype.h"

namespace gatecheck {

constexpr int kRmsSegTileRows = 32;   // rows of a dshift/dscale tile
// About this many dweight groups: enough that the one-pass backward's blocks
// (a group each) fill the GPU in whole waves at 32,768 rows and more.
constexpr int kRmsGroupsTarget = 4096;

GC_HD int rms_vec(int elem_bytes) { return 16 / elem_bytes; }

// A row's partials: about kRmsChunksPerThread chunks each, in whole warps,
// 32 to 1,024. Two chunks a partial let the one-pass backward give each
// partial's thread the same columns for the row's statistics and for the
// column sums, which it then holds in registers (48 floats at 16 bits).
constexpr int kRmsChunksPerThread = 2;
GC_HD int rms_row_threads(int64_t dim, int vec) {
  const int64_t chunks = (dim + vec - 1) / vec;
  const int64_t per = (chunks + kRmsChunksPerThread - 1) / kRmsChunksPerThread;
  const int64_t t = (per + 31) / 32 * 32;
  return int(t < 32 ? 32 : t > 1024 ? 1024 : t);
}

// An upper bound on the tiles of a call (each gate's last tile may be short).
GC_HD int64_t rms_max_tiles(int64_t rows, int64_t gates) {
  return (rows + kRmsSegTileRows - 1) / kRmsSegTileRows + (gates < rows ? gates : rows);
}

GC_HD int64_t rms_tiles_per_group(int64_t rows, int64_t gates) {
  const int64_t t = (rms_max_tiles(rows, gates) + kRmsGroupsTarget - 1) / kRmsGroupsTarget;
  return t < 1 ? 1 : t;
}

}  // namespace gatecheck
