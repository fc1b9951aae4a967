// The __global__ kernels of gate_residual. The per-element math comes from
// gate_residual_math.h only. Launch shapes are chosen in gate_residual_cuda.cu.
//
// Every compute kernel first reads the call's index status word and returns
// without writing anything if the index check of this call failed, so an
// out-of-range index never turns into an out-of-bounds access.
#pragma once

#include <cstdint>

#include "../binned_sum.h"
#include "../gate_residual_math.h"
#include "binned_merge_cuda.cuh"
#include "gate_residual_cuda_pack.cuh"
#include "gate_residual_cuda_plan.cuh"

namespace gatecheck {
namespace cuda_detail {

// Forward prologue: the index range check (integer compare-and-swap only). The first
// kernel of a call is launched without PDL: it starts only after everything
// queued before it (other streams' work included) has finished.
__global__ void check_index_kernel(const int64_t* index, int64_t rows, int64_t gates,
                                   unsigned long long* status, unsigned long long epoch) {
  let_next_kernel_start();  // the forward may load res and y meanwhile
  for (int64_t r = global_thread(); r < rows; r += global_threads())
    record_bad_row(index, r, gates, status, epoch);
}

template <class T>
struct FwdArgs {
  const T* res;
  const T* gate;
  const int64_t* index;
  const T* y;
  T* out;
  int64_t rows, dim, gates;
  int64_t gate_stride;  // elements between gate rows (>= dim: a strided view)
  const unsigned long long* status;
  unsigned long long epoch;
  cuda_status::Report* report;  // the stream's report of a failed call (mapped host memory)
};

// out = res + gate[index] * y. Block: R rows x (blockDim.x * N) columns.
// Everything is loaded before waiting for the index check: res, y and the
// index are in bounds whatever the index holds, and a gate row is read only
// where this row's own index is in range. Nothing is stored until the check
// of every row has passed. (A loop-carried prefetch of the next columns
// doubled the registers of the bf16 kernel and cost 35% of its speed on the
// H200, and blocks looping over rows in a capped grid were slower too: see
// docs/kernel-design.md, "Forward".)
template <class T, int N, int R>
__global__ void __launch_bounds__(256) fwd_kernel(FwdArgs<T> a) {
  const int64_t r0 = int64_t(blockIdx.x) * R;
  int64_t k[R];
#pragma unroll
  for (int u = 0; u < R; ++u) k[u] = r0 + u < a.rows ? a.index[r0 + u] : -1;
  const int64_t step = int64_t(gridDim.y) * blockDim.x * N;
  for (int64_t c = (int64_t(blockIdx.y) * blockDim.x + threadIdx.x) * N; c < a.dim; c += step) {
    Pack<T, N> rv[R], yv[R], gv[R];
#pragma unroll
    for (int u = 0; u < R; ++u) {
      if (r0 + u >= a.rows) continue;
      const int64_t o = (r0 + u) * a.dim + c;
      rv[u] = load_pack<T, N>(a.res + o);
      yv[u] = load_pack<T, N>(a.y + o);
      if (k[u] >= 0 && k[u] < a.gates) gv[u] = load_pack<T, N>(a.gate + k[u] * a.gate_stride + c);
    }
    wait_for_previous_kernel();  // returns at once after the first time
    if (last_kernel_found_failure(a, cuda_status::kReportedByForward)) return;  // the forward's last kernel
#pragma unroll
    for (int u = 0; u < R; ++u) {
      if (r0 + u >= a.rows) continue;
      Pack<T, N> ov;
#pragma unroll
      for (int j = 0; j < N; ++j) ov.e[j] = gate_residual_out(rv[u].e[j], gv[u].e[j], yv[u].e[j]);
      store_pack<T, N>(a.out + (r0 + u) * a.dim + c, ov);
    }
  }
  wait_for_previous_kernel();  // threads with no columns still finish after the check
}

template <class T>
struct BwdArgs {
  const T* grad_out;
  const T* gate;
  const T* y;
  T* grad_res;  // null: not written (a caller that takes grad_out itself as grad_res)
  T* grad_gate;
  T* grad_y;
  const int64_t* order;      // row ids sorted stably by gate
  const TileDesc* tiles;
  const PlanCount* totals;   // plan[gates]: totals of the scan
  float* partials;           // [slots, dim]
  int64_t dim;
  int64_t gate_stride;       // elements between gate rows; grad_gate is dense
  const unsigned long long* status;
  unsigned long long epoch;
  // The reproducible mode: [slots, dim, kBinnedWords], the binned sums of each
  // tile of a gate of several tiles, by partial slot; and its output state
  // [gates, dim, kBinnedWords], or null
  uint64_t* tile_states;
  uint64_t* binned_state;
};

// The start of both tile kernels: waits for the plan; false when this block
// has nothing to do (the call failed, or there are fewer tiles than blocks),
// else the tile's descriptor, with its row ids loaded into tile_rows.
template <class T>
__device__ __forceinline__ bool begin_tile(const BwdArgs<T>& a, int64_t* tile_rows, TileDesc& d) {
  wait_for_previous_kernel();
  let_next_kernel_start();
  if (call_failed(a.status, a.epoch)) return false;  // the same for every thread of the block
  if (int64_t(blockIdx.x) >= a.totals->tiles) return false;
  d = a.tiles[blockIdx.x];
  const int n = int(d.end - d.begin);
  for (int i = threadIdx.x; i < n; i += blockDim.x) tile_rows[i] = a.order[d.begin + i];
  __syncthreads();
  return true;
}

// A tile's sum of N columns from column c: grad_gate itself for a gate's only
// tile (the fold of one partial from +0, rounded once), else its partial.
template <class T, int N>
__device__ __forceinline__ void store_tile_sum(const BwdArgs<T>& a, const TileDesc& d, int64_t c, const float (&acc)[N]) {
  if (d.slot < 0) {
    Pack<T, N> gg;
#pragma unroll
    for (int j = 0; j < N; ++j) gg.e[j] = gate_residual_grad_gate_finish<T>(gate_residual_accumulate(0.0f, acc[j]));
    store_pack<T, N>(a.grad_gate + d.gate * a.dim + c, gg);
  } else {
    float* p = a.partials + d.slot * a.dim + c;
#pragma unroll
    for (int j = 0; j < N; ++j) p[j] = acc[j];
  }
}

// A tile's grad_gate sums for a thread's N columns, the tile kernel's
// accumulator (a template parameter, so that the reproducible mode is the
// same kernel, with the same loads and stores):
// - Fp32TileSum: today's fp32 sums in row order from +0, stored as the tile's
//   partial (or grad_gate for a gate's only tile);
// - BinnedTileSum: binned_sum.h's exact state per column in registers
//   (BinnedFp64Sum: the shares taken and summed on the fp64 pipe, no
//   atomics, no run-time register index), stored as fp32 sums are: a gate's
//   only tile writes its outputs, other tiles their state by partial slot,
//   folded per gate by fold_kernel. It may run
//   without grad_y (a partial for the split exchange): then neither the gate
//   nor grad_y is touched.
template <class T, int N>
struct Fp32TileSum {
  static constexpr bool kMayOmitGradY = false;
  float acc[N];
  __device__ __forceinline__ void clear() {
#pragma unroll
    for (int j = 0; j < N; ++j) acc[j] = 0.0f;
  }
  __device__ __forceinline__ void add(int j, float t) { acc[j] = gate_residual_accumulate(acc[j], t); }
  __device__ __forceinline__ void store(const BwdArgs<T>& a, const TileDesc& d, int64_t c) const {
    store_tile_sum<T, N>(a, d, c, acc);
  }
};

// A gate's finished binned sum at element at: its state's words and/or
// grad_gate, rounded once (either may be null). Written by a gate's only tile
// or by the fold.
template <class T>
__device__ __forceinline__ void store_gate_outputs(uint64_t* state, T* grad_gate, int64_t at,
                                                   const uint64_t (&w)[kBinnedWords]) {
  if (state) binned_cuda::store_state(state + at * kBinnedWords, w);
  if (grad_gate) grad_gate[at] = binned_finish_words<T>(w);
}

// A tile's binned state of column col, as the fp32 sums are stored: a gate's
// only tile writes the gate's outputs; a tile of a gate of several keeps it
// at its partial slot for fold_kernel.
template <class T>
__device__ __forceinline__ void store_binned_tile(const BwdArgs<T>& a, const TileDesc& d, int64_t col,
                                                  const uint64_t (&w)[kBinnedWords]) {
  if (d.slot >= 0) binned_cuda::store_state(a.tile_states + (d.slot * a.dim + col) * kBinnedWords, w);
  else store_gate_outputs(a.binned_state, a.grad_gate, d.gate * a.dim + col, w);
}

template <class T, int N>
struct BinnedTileSum {
  static_assert(kGradGateTileRows <= BinnedFp64Sum::kMaxTerms, "a tile's digits stay exact in fp64");
  static constexpr bool kMayOmitGradY = true;
  BinnedFp64Sum acc[N];
  __device__ __forceinline__ void clear() {
#pragma unroll
    for (int j = 0; j < N; ++j) acc[j].clear();
  }
  __device__ __forceinline__ void add(int j, float t) { acc[j].add(t); }
  __device__ __forceinline__ void store(const BwdArgs<T>& a, const TileDesc& d, int64_t c) const {
#pragma unroll
    for (int j = 0; j < N; ++j) {
      uint64_t v[kBinnedWords];
      acc[j].to_words(v);
      store_binned_tile(a, d, c + j, v);
    }
  }
};

// One row of a tile for a thread's N columns, as every tile kernel takes it:
// grad_res (a copy of g, unless the caller takes none) and grad_y written, g*y
// added to the tile's sums in row order.
template <class T, int N, class Sum = Fp32TileSum<T, N>>
__device__ __forceinline__ void bwd_row(const BwdArgs<T>& a, int64_t o, const Pack<T, N>& gv, const Pack<T, N>& yv,
                                        const Pack<T, N>& gk, Sum& sum) {
#pragma unroll
  for (int j = 0; j < N; ++j) sum.add(j, gate_residual_grad_gate_term(gv.e[j], yv.e[j]));
  if (Sum::kMayOmitGradY && !a.grad_y) return;
  Pack<T, N> gy;
#pragma unroll
  for (int j = 0; j < N; ++j) gy.e[j] = gate_residual_grad_y(gv.e[j], gk.e[j]);
  if (a.grad_res) store_pack<T, N>(a.grad_res + o, gv);
  store_pack<T, N>(a.grad_y + o, gy);
}
template <class T, int N>
__device__ __forceinline__ void bwd_row(const BwdArgs<T>& a, int64_t o, const Pack<T, N>& gv, const Pack<T, N>& yv,
                                        const Pack<T, N>& gk, float (&acc)[N]) {
  Pack<T, N> gy;
#pragma unroll
  for (int j = 0; j < N; ++j) {
    acc[j] = gate_residual_accumulate(acc[j], gate_residual_grad_gate_term(gv.e[j], yv.e[j]));
    gy.e[j] = gate_residual_grad_y(gv.e[j], gk.e[j]);
  }
  if (a.grad_res) store_pack<T, N>(a.grad_res + o, gv);
  store_pack<T, N>(a.grad_y + o, gy);
}

// One block per (tile, column chunk). Each thread owns N columns and walks the
// tile's rows in order: writes grad_res and grad_y of each row, and adds g*y
// to its Sum one row after the other (fp32 from +0: the host twin's order).
template <class T, int N, int U, class Sum = Fp32TileSum<T, N>>
__device__ __forceinline__ void bwd_tile(const BwdArgs<T>& a) {
  __shared__ int64_t tile_rows[kGradGateTileRows];
  TileDesc d;
  if (!begin_tile(a, tile_rows, d)) return;
  const int n = int(d.end - d.begin);
  const int64_t step = int64_t(gridDim.y) * blockDim.x * N;
  const bool with_grad_y = !Sum::kMayOmitGradY || a.grad_y;
  for (int64_t c = (int64_t(blockIdx.y) * blockDim.x + threadIdx.x) * N; c < a.dim; c += step) {
    Pack<T, N> gk;
    if (with_grad_y) gk = load_pack<T, N>(a.gate + d.gate * a.gate_stride + c);
    Sum sum;
    sum.clear();
    for (int i = 0; i < n; i += U) {
      Pack<T, N> gv[U], yv[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (i + u >= n) break;
        const int64_t o = tile_rows[i + u] * a.dim + c;
        gv[u] = load_pack<T, N>(a.grad_out + o);
        yv[u] = load_pack<T, N>(a.y + o);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (i + u >= n) break;
        bwd_row<T, N, Sum>(a, tile_rows[i + u] * a.dim + c, gv[u], yv[u], gk, sum);
      }
    }
    sum.store(a, d, c);
  }
}

template <class T, int N, int U, class Sum = Fp32TileSum<T, N>>
__global__ void __launch_bounds__(256) bwd_tile_kernel(BwdArgs<T> a) {
  bwd_tile<T, N, U, Sum>(a);
}

// The same under a register cap, for 16-byte vectors and 4 rows in flight:
// uncapped, that variant takes 73-74 registers, so blocks of 224 threads (5376
// columns) fit 3 to an SM instead of 4 (ncu, H200); at 72 it spills 4-8 bytes and
// the 5376-column backward is 2.7% faster (3072 even).
// GATECHECK_TILE_MAXNREG=0 (a measuring build) launches the uncapped kernel.
// (__launch_bounds__ and __maxnreg__ cannot both be given; no launch exceeds
// 256 threads.)
#ifndef GATECHECK_TILE_MAXNREG
#define GATECHECK_TILE_MAXNREG 72
#endif
template <class T, int N, int U>
__global__ void __maxnreg__(GATECHECK_TILE_MAXNREG > 0 ? GATECHECK_TILE_MAXNREG : 255) bwd_tile_capped_kernel(BwdArgs<T> a) {
  bwd_tile<T, N, U>(a);
}

// Short tiles (a few rows a gate: one gate per row, rows/3), K consecutive
// tiles a block. Consecutive tiles cover consecutive positions of the
// gate-sorted order, so a block's rows are one run of it: each thread walks
// that run for its columns with U rows of loads in flight across tile
// boundaries, summing each tile's rows in row order from +0 (as bwd_tile) and
// storing a tile's sum, or +0 for an empty one, as the run leaves it. The
// descriptors and row ids are loaded once for K tiles: bwd_tile's chain of
// dependent loads (descriptor, row ids, data) ahead of every one-row tile held
// its backward to 2.7-3.0 TB/s with one gate per row (H200).
template <class T, int N, int K, int U>
__global__ void __launch_bounds__(256) bwd_short_tiles_kernel(BwdArgs<T> a) {
  static_assert(K >= 1 && K <= 255, "a byte per row names its tile");
  __shared__ TileDesc desc[K];
  __shared__ int64_t rows[K * kGradGateTileRows];
  __shared__ unsigned char row_tile[K * kGradGateTileRows];
  wait_for_previous_kernel();
  let_next_kernel_start();
  if (call_failed(a.status, a.epoch)) return;  // the same for every thread of the block
  const int64_t t0 = int64_t(blockIdx.x) * K, total = a.totals->tiles;
  if (t0 >= total) return;
  const int kk = int(total - t0 < K ? total - t0 : K);
  if (int(threadIdx.x) < kk) desc[threadIdx.x] = a.tiles[t0 + threadIdx.x];
  __syncthreads();
  const int64_t p0 = desc[0].begin;
  const int m = int(desc[kk - 1].end - p0);
  for (int i = threadIdx.x; i < m; i += blockDim.x) {
    rows[i] = a.order[p0 + i];
    int k = 0;
    while (desc[k].end - p0 <= i) ++k;  // i < m: some tile of the block holds it
    row_tile[i] = (unsigned char)k;
  }
  __syncthreads();
  const int64_t step = int64_t(gridDim.y) * blockDim.x * N;
  for (int64_t c = (int64_t(blockIdx.y) * blockDim.x + threadIdx.x) * N; c < a.dim; c += step) {
    float acc[N];
#pragma unroll
    for (int j = 0; j < N; ++j) acc[j] = 0.0f;
    int cur = 0;  // the tile being summed
    auto finish_tile = [&]() {
      store_tile_sum<T, N>(a, desc[cur], c, acc);
#pragma unroll
      for (int j = 0; j < N; ++j) acc[j] = 0.0f;
      ++cur;
    };
    for (int i = 0; i < m; i += U) {
      Pack<T, N> gv[U], yv[U], gk[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (i + u >= m) break;
        const int64_t o = rows[i + u] * a.dim + c;
        gv[u] = load_pack<T, N>(a.grad_out + o);
        yv[u] = load_pack<T, N>(a.y + o);
        gk[u] = load_pack<T, N>(a.gate + desc[row_tile[i + u]].gate * a.gate_stride + c);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (i + u >= m) break;
        while (cur < int(row_tile[i + u])) finish_tile();  // the tiles before this row's, empty ones included
        bwd_row<T, N>(a, rows[i + u] * a.dim + c, gv[u], yv[u], gk[u], acc);
      }
    }
    while (cur < kk) finish_tile();
  }
}

// The same work for long tiles, staged through shared memory so that few
// tiles still keep the memory system busy. Block: 8 warps x 32 lanes, a chunk
// of 32*N columns. Per stage of kStageRows rows, all threads load in parallel
// (each warp one row at a time, 32*N*sizeof(T) contiguous bytes), write
// grad_res and grad_y, and put the fp32 terms g*y in shared memory; then
// thread t adds column t's terms in row order, so each column's sum is the
// same sequential fp32 sum from +0 as in bwd_tile_kernel and the host twin.
// The next stage's loads are in flight during those adds.
constexpr int kStageWarps = 8;
constexpr int kStageRowsPerWarp = 4;
constexpr int kStageRows = kStageWarps * kStageRowsPerWarp;

template <class T, int N>
__global__ void __launch_bounds__(kStageWarps * 32) bwd_staged_kernel(BwdArgs<T> a) {
  constexpr int CW = 32 * N;  // columns per block
  constexpr int U = kStageRowsPerWarp;
  __shared__ int64_t tile_rows[kGradGateTileRows];
  __shared__ __align__(16) float terms[kStageRows][CW];
  TileDesc d;
  if (!begin_tile(a, tile_rows, d)) return;
  const int n = int(d.end - d.begin);
  const int lane = int(threadIdx.x & 31), warp = int(threadIdx.x >> 5);
  const int stages = (n + kStageRows - 1) / kStageRows;
  for (int64_t c0 = int64_t(blockIdx.y) * CW; c0 < a.dim; c0 += int64_t(gridDim.y) * CW) {
    const int64_t c = c0 + lane * N;  // this thread's columns while loading (dim is a multiple of N)
    const bool col_ok = c < a.dim;
    Pack<T, N> gk;
    if (col_ok) gk = load_pack<T, N>(a.gate + d.gate * a.gate_stride + c);
    Pack<T, N> gv[U], yv[U];
    auto load_stage = [&](int s) {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int i = s * kStageRows + u * kStageWarps + warp;
        if (!col_ok || i >= n) continue;
        const int64_t o = tile_rows[i] * a.dim + c;
        gv[u] = load_pack<T, N>(a.grad_out + o);
        yv[u] = load_pack<T, N>(a.y + o);
      }
    };
    load_stage(0);
    float acc = 0.0f;  // column c0 + threadIdx.x
    for (int s = 0; s < stages; ++s) {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int r = u * kStageWarps + warp, i = s * kStageRows + r;
        if (!col_ok || i >= n) continue;
        const int64_t o = tile_rows[i] * a.dim + c;
        Pack<T, N> gy;
        float t[N];
#pragma unroll
        for (int j = 0; j < N; ++j) {
          t[j] = gate_residual_grad_gate_term(gv[u].e[j], yv[u].e[j]);
          gy.e[j] = gate_residual_grad_y(gv[u].e[j], gk.e[j]);
        }
        if (a.grad_res) store_pack<T, N>(a.grad_res + o, gv[u]);
        store_pack<T, N>(a.grad_y + o, gy);
        if constexpr (N % 4 == 0) {
#pragma unroll
          for (int j = 0; j < N; j += 4)
            *reinterpret_cast<float4*>(&terms[r][lane * N + j]) = make_float4(t[j], t[j + 1], t[j + 2], t[j + 3]);
        } else {
#pragma unroll
          for (int j = 0; j < N; ++j) terms[r][lane * N + j] = t[j];
        }
      }
      __syncthreads();
      if (s + 1 < stages) load_stage(s + 1);
      const int rows_here = min(kStageRows, n - s * kStageRows);
      if (int(threadIdx.x) < CW && c0 + threadIdx.x < a.dim) {
#pragma unroll 8
        for (int r = 0; r < rows_here; ++r) acc = gate_residual_accumulate(acc, terms[r][threadIdx.x]);
      }
      __syncthreads();  // terms is rewritten by the next stage
    }
    const int64_t cc = c0 + threadIdx.x;
    if (int(threadIdx.x) < CW && cc < a.dim) {
      if (d.slot < 0) a.grad_gate[d.gate * a.dim + cc] = gate_residual_grad_gate_finish<T>(gate_residual_accumulate(0.0f, acc));
      else a.partials[d.slot * a.dim + cc] = acc;
    }
  }
}

// The fold of gates of several tiles, one kernel for both accumulators: a
// block per (listed gate, column chunk) folds the gate's tile slots [slot0,
// slot0 + tiles) column by column with its Args' fold_column. The last kernel
// of a backward with an index plan in memory: block (0, 0) reports a failed
// call. (Gates of one tile were written by their tile.)
template <class Args>
__global__ void __launch_bounds__(256) fold_kernel(Args a) {
  wait_for_previous_kernel();
  if (last_kernel_found_failure(a, cuda_status::kReportedByBackward)) return;
  if (int64_t(blockIdx.x) >= a.totals->multi) return;
  const FoldDesc fd = a.folds[blockIdx.x];
  const int64_t step = int64_t(gridDim.y) * blockDim.x;
  for (int64_t c = int64_t(blockIdx.y) * blockDim.x + threadIdx.x; c < a.dim; c += step) a.fold_column(fd, c);
}

// What both folds read: the plan's list of gates of several tiles, and what
// the failure report needs.
struct FoldPlan {
  const FoldDesc* folds;    // [totals->multi]
  const PlanCount* totals;  // plan[gates]: totals of the scan
  int64_t dim;
  const unsigned long long* status;
  unsigned long long epoch;
  const int64_t* index;  // for the report of a failed call
  int64_t gates;
  cuda_status::Report* report;
};

// fp32 partials: folded in tile order from +0, rounded once.
template <class T>
struct FoldArgs : FoldPlan {
  const float* partials;
  T* grad_gate;

  __device__ __forceinline__ void fold_column(const FoldDesc& fd, int64_t c) const {
    const float* p = partials + fd.slot0 * dim + c;
    float total = 0.0f;
#pragma unroll 8
    for (int64_t t = 0; t < fd.tiles; ++t) total = gate_residual_accumulate(total, p[t * dim]);
    grad_gate[fd.gate * dim + c] = gate_residual_grad_gate_finish<T>(total);
  }
};

// Binned tile states: merged (exact integers, so any order gives the same
// words), then the state and/or grad_gate written, rounded once.
template <class T>
struct BinnedFoldArgs : FoldPlan {
  const uint64_t* tile_states;  // by partial slot
  uint64_t* state;              // [gates, dim, kBinnedWords], or null
  T* grad_gate;                 // or null

  __device__ __forceinline__ void fold_column(const FoldDesc& fd, int64_t c) const {
    BinnedSum s;
    s.clear();
    binned_cuda::merge_states<true>(s, tile_states + (fd.slot0 * dim + c) * kBinnedWords, dim * kBinnedWords,
                                    int32_t(fd.tiles));
    uint64_t v[kBinnedWords];
    s.to_words(v);
    store_gate_outputs(state, grad_gate, fd.gate * dim + c, v);
  }
};

}  // namespace cuda_detail
}  // namespace gatecheck
