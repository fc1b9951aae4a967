// gatecheck-pattern-bench: the one-kernel backward's memory traffic without its
// plan or fold, to ask whether the access pattern alone holds its tile stages
// to about 2.8 TB/s at 4097 rows (it does not: docs/kernel-design.md, "What
// holds its stages").
//
// Every variant reads two tensors (g, y) and writes two (a = g; b = y, or
// b = g * gate in the regs variants) of
// rows x dim bf16, rows taken in a gate-sorted order (9 gates, sorted or
// random index) and cut into tiles of 256 rows of one gate, as the backward
// cuts them:
//   memcpy        two device-to-device copies of the same bytes
//   rows          whole rows, 4 a block (the forward's pattern)
//   rows-grid     whole rows, as many blocks as `pipe` has, looping
//   pieces-B      a block per (tile, B-byte piece of a row): 16-byte loads into
//                 registers, 4 rows in flight a thread, then the stores
//   pipe-B        the same blocks with the backward's copy pipeline: cp.async,
//                 4 stages of 16 rows in shared memory, stores from there
//   pipe-B+sums   and the backward's column sums (fp32, row order, 2 columns a
//                 thread) written as one partial a column and tile
//   pieces-512+sync  pieces with a block-wide barrier a round
//   regsR[u][+pf]+sums  a candidate stage design: pieces' register loads (R rows
//                 a thread and round, +pf: the next round's loads first),
//                 b = g * gate, the fp32 terms through shared memory, each
//                 column summed in row order by one thread (u: a full
//                 round's sum unrolled)
//   regs-gN[+pf]+sums  the candidate with N consecutive rows a thread, added
//                 first in the thread (another order of the sums: groups of
//                 N rows, then the groups in row order)
//   NAME-s        the variant with the tile's row ids staged in shared memory
//                 as int64 at the block's start, as the one-kernel backward
//                 holds them; without -s each use reads the global int list
//                 (a dependent load before every copy)
// Times: bench_device's held median (CUDA events), inputs rotated beyond L2.
// Before a variant is timed, its a and column sums are checked bit for bit
// against the host (the sums in the variant's order); a wrong one exits 1.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "bench_device.h"

namespace gatecheck {
namespace bench {
namespace {

constexpr int kThreads = 256;
constexpr int kTileRows = 256;
constexpr int kStageRows = 16;
constexpr int kDepth = 4;
constexpr int kGates = 9;

struct Tile {
  int start;  // first entry of the tile in the gate-sorted row list
  int n;      // its rows
};

struct Tensors {
  const uint4* g;
  const uint4* y;
  uint4* a;
  uint4* b;
};

// A tile's row ids: read from the global row list at each use (Smem false),
// or staged once in shared memory as int64, as the one-kernel backward holds
// them (Smem true; every thread must call stage() before the first use).
template <bool Smem>
struct RowIds {
  const int* rows;
  int start, n;
  int64_t* staged;  // kTileRows entries of shared memory (Smem only)
  __device__ void stage() const {
    if constexpr (Smem) {
      for (int i = int(threadIdx.x); i < n; i += int(blockDim.x)) staged[i] = rows[start + i];
      __syncthreads();
    }
  }
  __device__ int64_t operator[](int i) const { return Smem ? staged[i] : int64_t(rows[start + i]); }
};

// A thread of a block that owns a piece of Copies 16-byte columns of tile
// blockIdx.y: its tile, the tile's row ids, its column (part) and row group.
// The constructor stages the ids (a barrier with SmemRows), so every thread
// of the block must construct one; staged: kTileRows int64 of shared memory.
template <int Copies, bool SmemRows>
struct PieceThread {
  Tile tile;
  RowIds<SmemRows> ids;
  int part, group;
  int64_t col;
  bool col_ok;
  __device__ PieceThread(const Tile* tiles, const int* rows, int64_t* staged, int64_t row_vecs)
      : tile(tiles[blockIdx.y]),
        ids{rows, tile.start, tile.n, staged},
        part(int(threadIdx.x) % Copies),
        group(int(threadIdx.x) / Copies),
        col(int64_t(blockIdx.x) * Copies + part),
        col_ok(col < row_vecs) {
    ids.stage();
  }
};

// Whole rows: row groups of RowsPerBlock rows, blockIdx.x, + gridDim.x, ...
template <int RowsPerBlock>
__global__ void __launch_bounds__(kThreads) rows_kernel(Tensors t, const int* rows, int nrows, int64_t row_vecs) {
  constexpr int kUnroll = 4;
  for (int64_t rg = blockIdx.x; rg * RowsPerBlock < nrows; rg += gridDim.x) {
    const int64_t first = rg * RowsPerBlock;
    const int64_t here = nrows - first < RowsPerBlock ? nrows - first : RowsPerBlock;
    const int64_t total = here * row_vecs;
    for (int64_t v0 = threadIdx.x; v0 < total; v0 += int64_t(kThreads) * kUnroll) {
      uint4 gv[kUnroll], yv[kUnroll];
      int64_t o[kUnroll];
#pragma unroll
      for (int k = 0; k < kUnroll; ++k) {
        const int64_t v = v0 + int64_t(k) * kThreads;
        o[k] = v < total ? int64_t(rows[first + v / row_vecs]) * row_vecs + v % row_vecs : -1;
        if (o[k] >= 0) gv[k] = t.g[o[k]], yv[k] = t.y[o[k]];
      }
#pragma unroll
      for (int k = 0; k < kUnroll; ++k)
        if (o[k] >= 0) t.a[o[k]] = gv[k], t.b[o[k]] = yv[k];
    }
  }
}

// A block per (piece of PieceBytes, tile): blockIdx.x the piece, blockIdx.y the
// tile. With Sync, a block-wide barrier after every round of rows (the
// coupling that a shared-memory hand-off needs, without the hand-off).
template <int PieceBytes, bool Sync, bool SmemRows>
__global__ void __launch_bounds__(kThreads) pieces_kernel(Tensors t, const int* rows, const Tile* tiles, int64_t row_vecs) {
  constexpr int kInFlight = 4;
  __shared__ int64_t staged[kTileRows];
  constexpr int kGroups = kThreads / (PieceBytes / 16);
  const PieceThread<PieceBytes / 16, SmemRows> th(tiles, rows, staged, row_vecs);
  const Tile& tile = th.tile;
  const auto& ids = th.ids;
  const int group = th.group;
  const int64_t col = th.col;
  const bool col_ok = th.col_ok;
  if (!Sync && !col_ok) return;
  for (int i0 = 0; i0 < tile.n; i0 += kGroups * kInFlight) {
    uint4 gv[kInFlight], yv[kInFlight];
    int64_t o[kInFlight];
#pragma unroll
    for (int k = 0; k < kInFlight; ++k) {
      const int i = i0 + group + k * kGroups;
      o[k] = col_ok && i < tile.n ? ids[i] * row_vecs + col : -1;
      if (o[k] >= 0) gv[k] = t.g[o[k]], yv[k] = t.y[o[k]];
    }
#pragma unroll
    for (int k = 0; k < kInFlight; ++k)
      if (o[k] >= 0) t.a[o[k]] = gv[k], t.b[o[k]] = yv[k];
    if (Sync) __syncthreads();
  }
}

// A thread of the register designs: (part, group) of a block that owns a
// 512-byte piece (32 16-byte columns) of tile blockIdx.y, in rounds of
// kGroups x R rows, with its 16 bytes of the gate row. A round's R rows are
// every kGroups-th row from its group's (Consecutive: R consecutive rows).
template <int R, bool Consecutive, bool SmemRows>
struct RegsThread : PieceThread<32, SmemRows> {
  using Base = PieceThread<32, SmemRows>;
  using Base::tile, Base::ids, Base::group, Base::col, Base::col_ok;
  static constexpr int kCopies = 32, kGroups = kThreads / kCopies, kRound = kGroups * R;
  static constexpr int kCols = kCopies * 8;  // bf16 columns of a piece
  struct Regs {                              // one round's rows in registers
    uint4 g[R], y[R];
    int64_t o[R];  // -1: past the tile's end, or a column past the row's
  };
  int rounds;
  uint4 kv;

  // As PieceThread's, and this thread's 16 bytes of the gate row.
  __device__ RegsThread(const Tile* tiles, const int* rows, int64_t* staged, int64_t row_vecs, const uint4* gate)
      : Base(tiles, rows, staged, row_vecs), rounds((tile.n + kRound - 1) / kRound), kv(col_ok ? gate[col] : uint4{}) {}

  __device__ void load(int k, Regs& r, const Tensors& t, int64_t row_vecs) const {
#pragma unroll
    for (int j = 0; j < R; ++j) {
      const int i = k * kRound + (Consecutive ? group * R + j : group + j * kGroups);
      r.o[j] = col_ok && k < rounds && i < tile.n ? ids[i] * row_vecs + col : -1;
      if (r.o[j] >= 0) r.g[j] = t.g[r.o[j]], r.y[j] = t.y[r.o[j]];
    }
  }

  // Every round through work(k, regs): two register sets in turn; with
  // Prefetch, round k + 1's loads are issued before round k's work.
  template <bool Prefetch, class Work>
  __device__ void run(const Tensors& t, int64_t row_vecs, Work& work) const {
    Regs a, b;
    auto load_round = [&](int k, Regs& r) { load(k, r, t, row_vecs); };
    load_round(0, a);
    for (int k = 0; k < rounds; k += 2) {
      if (Prefetch) load_round(k + 1, b);
      work(k, a);
      if (k + 1 >= rounds) break;
      if (!Prefetch) load_round(k + 1, b);
      if (Prefetch) load_round(k + 2, a);
      work(k + 1, b);
      if (!Prefetch) load_round(k + 2, a);
    }
  }
};

// A candidate for the backward's stages: loads into registers as in
// `pieces` (RowsPerThread rows a thread and round, the next round's loads
// issued before this round's work with Prefetch), stores a = g and
// b = g * gate from registers, the fp32 terms g * y into shared memory
// (double-buffered, one barrier a round), and each column summed in row
// order by one thread (one column a thread: 512-byte pieces only).
// With Unroll, a full round's sum is unrolled, so its shared loads issue
// ahead of the chain of adds instead of one load's latency an add.
template <int RowsPerThread, bool Prefetch, bool Unroll, bool SmemRows>
__global__ void __launch_bounds__(kThreads) regs_kernel(Tensors t, const int* rows, const Tile* tiles, int64_t row_vecs,
                                                       const uint4* gate, float* partials) {
  using Thread = RegsThread<RowsPerThread, false, SmemRows>;
  using Regs = typename Thread::Regs;
  constexpr int kGroups = Thread::kGroups, kRound = Thread::kRound, kCols = Thread::kCols;
  extern __shared__ float terms[];    // [2][kRound][kCols]
  __shared__ int64_t staged[kTileRows];
  const Thread th(tiles, rows, staged, row_vecs, gate);
  float acc = 0.0f;
  auto work = [&](int k, const Regs& r) {
    float* buf = terms + (k & 1) * kRound * kCols;
#pragma unroll
    for (int j = 0; j < RowsPerThread; ++j) {
      if (r.o[j] < 0) continue;
      const auto* g2 = reinterpret_cast<const __nv_bfloat162*>(&r.g[j]);
      const auto* y2 = reinterpret_cast<const __nv_bfloat162*>(&r.y[j]);
      const auto* k2 = reinterpret_cast<const __nv_bfloat162*>(&th.kv);
      uint4 bv;
      auto* b2 = reinterpret_cast<__nv_bfloat162*>(&bv);
      float4 tt[2];
      float* tf = &tt[0].x;
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float2 gf = __bfloat1622float2(g2[e]), yf = __bfloat1622float2(y2[e]), kf = __bfloat1622float2(k2[e]);
        b2[e] = __floats2bfloat162_rn(__fmul_rn(gf.x, kf.x), __fmul_rn(gf.y, kf.y));
        tf[2 * e] = __fmul_rn(gf.x, yf.x);
        tf[2 * e + 1] = __fmul_rn(gf.y, yf.y);
      }
      t.a[r.o[j]] = r.g[j];
      t.b[r.o[j]] = bv;
      float4* to = reinterpret_cast<float4*>(buf + (th.group + j * kGroups) * kCols + th.part * 8);
      to[0] = tt[0];
      to[1] = tt[1];
    }
    __syncthreads();
    const int here = min(kRound, th.tile.n - k * kRound);
    if (int64_t(blockIdx.x) * kCols + threadIdx.x < row_vecs * 8) {
      if (Unroll && here == kRound) {
#pragma unroll
        for (int i = 0; i < kRound; ++i) acc = __fadd_rn(acc, buf[i * kCols + threadIdx.x]);
      } else {
        for (int i = 0; i < here; ++i) acc = __fadd_rn(acc, buf[i * kCols + threadIdx.x]);
      }
    }
  };
  th.template run<Prefetch>(t, row_vecs, work);
  const int64_t c = int64_t(blockIdx.x) * kCols + threadIdx.x;
  if (c < row_vecs * 8) partials[int64_t(blockIdx.y) * row_vecs * 8 + c] = acc;
}

// The candidate with another order of the sums: each thread adds its
// RowsPerThread consecutive rows of a column first (((t0 + t1) + t2) + ...),
// so that shared memory carries one fp32 value per column and RowsPerThread
// rows, not one a row; the column's thread then adds the groups in row order.
template <int RowsPerThread, bool Prefetch, bool SmemRows>
__global__ void __launch_bounds__(kThreads) grouped_kernel(Tensors t, const int* rows, const Tile* tiles, int64_t row_vecs,
                                                          const uint4* gate, float* partials) {
  using Thread = RegsThread<RowsPerThread, true, SmemRows>;
  using Regs = typename Thread::Regs;
  constexpr int kGroups = Thread::kGroups, kRound = Thread::kRound, kCols = Thread::kCols;
  __shared__ float sums[2][kGroups][kCols];
  __shared__ int64_t staged[kTileRows];
  const Thread th(tiles, rows, staged, row_vecs, gate);
  float acc = 0.0f;
  auto work = [&](int k, const Regs& r) {
    float part_sum[8];
    const auto* k2 = reinterpret_cast<const __nv_bfloat162*>(&th.kv);
#pragma unroll
    for (int j = 0; j < RowsPerThread; ++j) {
      if (r.o[j] < 0) break;  // rows past the tile's end come last
      const auto* g2 = reinterpret_cast<const __nv_bfloat162*>(&r.g[j]);
      const auto* y2 = reinterpret_cast<const __nv_bfloat162*>(&r.y[j]);
      uint4 bv;
      auto* b2 = reinterpret_cast<__nv_bfloat162*>(&bv);
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float2 gf = __bfloat1622float2(g2[e]), yf = __bfloat1622float2(y2[e]), kf = __bfloat1622float2(k2[e]);
        b2[e] = __floats2bfloat162_rn(__fmul_rn(gf.x, kf.x), __fmul_rn(gf.y, kf.y));
        const float t0 = __fmul_rn(gf.x, yf.x), t1 = __fmul_rn(gf.y, yf.y);
        part_sum[2 * e] = j == 0 ? t0 : __fadd_rn(part_sum[2 * e], t0);
        part_sum[2 * e + 1] = j == 0 ? t1 : __fadd_rn(part_sum[2 * e + 1], t1);
      }
      t.a[r.o[j]] = r.g[j];
      t.b[r.o[j]] = bv;
    }
    if (r.o[0] >= 0) {
      float4* to = reinterpret_cast<float4*>(&sums[k & 1][th.group][th.part * 8]);
      to[0] = make_float4(part_sum[0], part_sum[1], part_sum[2], part_sum[3]);
      to[1] = make_float4(part_sum[4], part_sum[5], part_sum[6], part_sum[7]);
    }
    __syncthreads();
    const int groups_here = min(kGroups, (th.tile.n - k * kRound + RowsPerThread - 1) / RowsPerThread);
    if (int64_t(blockIdx.x) * kCols + threadIdx.x < row_vecs * 8) {
      if (groups_here == kGroups) {
#pragma unroll
        for (int q = 0; q < kGroups; ++q) acc = __fadd_rn(acc, sums[k & 1][q][threadIdx.x]);
      } else {
        for (int q = 0; q < groups_here; ++q) acc = __fadd_rn(acc, sums[k & 1][q][threadIdx.x]);
      }
    }
  };
  th.template run<Prefetch>(t, row_vecs, work);
  const int64_t c = int64_t(blockIdx.x) * kCols + threadIdx.x;
  if (c < row_vecs * 8) partials[int64_t(blockIdx.y) * row_vecs * 8 + c] = acc;
}

__device__ __forceinline__ void copy16_async(void* smem, const void* gmem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem) : "memory");
}

// The backward's copy pipeline on a (piece, tile) block; with Sums, its
// second pass too (partials[tile][column]).
template <int PieceBytes, bool Sums, bool SmemRows>
__global__ void __launch_bounds__(kThreads) pipe_kernel(Tensors t, const int* rows, const Tile* tiles, int64_t row_vecs,
                                                       float* partials) {
  constexpr int kCopies = PieceBytes / 16, kGroups = kThreads / kCopies;
  constexpr int kVecs = kStageRows * kCopies;  // 16-byte vectors a stage and tensor
  extern __shared__ uint4 smem[];
  uint4* gs = smem;
  uint4* ys = smem + kDepth * kVecs;
  __shared__ int64_t staged[kTileRows];
  const PieceThread<kCopies, SmemRows> th(tiles, rows, staged, row_vecs);
  const Tile& tile = th.tile;
  const auto& ids = th.ids;
  const int part = th.part, group = th.group;
  const int64_t col = th.col;
  const bool col_ok = th.col_ok;
  const int stages = (tile.n + kStageRows - 1) / kStageRows;
  auto issue = [&](int s) {
    if (s < stages && col_ok) {
      const int buf = s % kDepth;
      for (int r = group; r < kStageRows; r += kGroups) {
        const int i = s * kStageRows + r;
        if (i >= tile.n) break;
        const int64_t o = ids[i] * row_vecs + col;
        copy16_async(gs + buf * kVecs + r * kCopies + part, t.g + o);
        copy16_async(ys + buf * kVecs + r * kCopies + part, t.y + o);
      }
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
  };
  for (int s = 0; s < kDepth - 1; ++s) issue(s);
  // Sums: thread x adds columns 2x and 2x + 1 of the piece (bf16 pairs).
  constexpr int kSumThreads = PieceBytes / 4;
  const bool sums = Sums && int(threadIdx.x) < kSumThreads && int64_t(blockIdx.x) * kCopies * 4 + threadIdx.x < row_vecs * 4;
  float acc0 = 0.0f, acc1 = 0.0f;
  for (int s = 0; s < stages; ++s) {
    asm volatile("cp.async.wait_group %0;" ::"n"(kDepth - 2) : "memory");
    __syncthreads();
    issue(s + kDepth - 1);
    const int buf = s % kDepth;
    if (col_ok) {
      for (int r = group; r < kStageRows; r += kGroups) {
        const int i = s * kStageRows + r;
        if (i >= tile.n) break;
        const int64_t o = ids[i] * row_vecs + col;
        t.a[o] = gs[buf * kVecs + r * kCopies + part];
        t.b[o] = ys[buf * kVecs + r * kCopies + part];
      }
    }
    if (sums) {
      const int here = min(kStageRows, tile.n - s * kStageRows);
      const auto* g2 = reinterpret_cast<const __nv_bfloat162*>(gs + buf * kVecs) + threadIdx.x;
      const auto* y2 = reinterpret_cast<const __nv_bfloat162*>(ys + buf * kVecs) + threadIdx.x;
#pragma unroll 4
      for (int r = 0; r < here; ++r) {
        const float2 gf = __bfloat1622float2(g2[r * kCopies * 4]), yf = __bfloat1622float2(y2[r * kCopies * 4]);
        acc0 = __fadd_rn(acc0, __fmul_rn(gf.x, yf.x));
        acc1 = __fadd_rn(acc1, __fmul_rn(gf.y, yf.y));
      }
    }
  }
  asm volatile("cp.async.wait_group 0;" ::: "memory");
  if (sums) {
    const int64_t c = (int64_t(blockIdx.x) * kCopies * 4 + threadIdx.x) * 2;
    partials[int64_t(blockIdx.y) * row_vecs * 8 + c] = acc0;
    partials[int64_t(blockIdx.y) * row_vecs * 8 + c + 1] = acc1;
  }
}

// The gate-sorted row list and its tiles: 9 gates, each row's gate from its
// position (sorted) or a hash (random); stable, so a gate's rows ascend.
void make_plan(int nrows, bool random, std::vector<int>& rows, std::vector<Tile>& tiles) {
  std::vector<int> gate(static_cast<size_t>(nrows));
  for (int r = 0; r < nrows; ++r) {
    uint64_t h = uint64_t(r) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 31;
    gate[size_t(r)] = random ? int(h % kGates) : int(int64_t(r) * kGates / nrows);
  }
  rows.resize(size_t(nrows));
  std::iota(rows.begin(), rows.end(), 0);
  std::stable_sort(rows.begin(), rows.end(), [&](int p, int q) { return gate[size_t(p)] < gate[size_t(q)]; });
  tiles.clear();
  for (int i = 0; i < nrows;) {
    int j = i;
    while (j < nrows && gate[size_t(rows[size_t(j)])] == gate[size_t(rows[size_t(i)])] && j - i < kTileRows) ++j;
    tiles.push_back({i, j - i});
    i = j;
  }
}

struct Shape {
  int rows;
  int dim;
  bool random;
};

void run_shape(const Shape& s, int reps, const Warmup& warmup, double ceiling, bool& wrong) {
  const int64_t row_vecs = int64_t(s.dim) * 2 / 16;
  const size_t tensor_bytes = size_t(s.rows) * size_t(s.dim) * 2;
  const double bytes = 4.0 * double(tensor_bytes);
  int dev = 0;
  cudaDeviceProp prop{};
  cuda_ok(cudaGetDevice(&dev), "cudaGetDevice");
  cuda_ok(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
  // Sets of the four tensors, enough that the set used two calls ago is past L2 twice over.
  const int sets = std::max(3, int(4.0 * double(prop.l2CacheSize) / bytes) + 2);
  std::vector<Tensors> set(static_cast<size_t>(sets));
  std::vector<void*> owned;
  for (auto& t : set) {
    void* p[4];
    for (auto& q : p) {
      cuda_ok(cudaMalloc(&q, tensor_bytes), "cudaMalloc (tensors)");
      fill_random(q, int64_t(tensor_bytes / 2), 2, uint64_t(owned.size()) + 1);
      owned.push_back(q);
    }
    t = {static_cast<const uint4*>(p[0]), static_cast<const uint4*>(p[1]), static_cast<uint4*>(p[2]), static_cast<uint4*>(p[3])};
  }
  std::vector<int> rows;
  std::vector<Tile> tiles;
  make_plan(s.rows, s.random, rows, tiles);
  int* d_rows = nullptr;
  Tile* d_tiles = nullptr;
  float* d_partials = nullptr;
  cuda_ok(cudaMalloc(&d_rows, rows.size() * sizeof(int)), "cudaMalloc (rows)");
  cuda_ok(cudaMalloc(&d_tiles, tiles.size() * sizeof(Tile)), "cudaMalloc (tiles)");
  cuda_ok(cudaMalloc(&d_partials, tiles.size() * size_t(s.dim) * sizeof(float)), "cudaMalloc (partials)");
  cuda_ok(cudaMemcpy(d_rows, rows.data(), rows.size() * sizeof(int), cudaMemcpyHostToDevice), "copy rows");
  cuda_ok(cudaMemcpy(d_tiles, tiles.data(), tiles.size() * sizeof(Tile), cudaMemcpyHostToDevice), "copy tiles");

  const double copy_us = median_us(
      [&](int i) {
        const Tensors& t = set[size_t(i % sets)];
        cudaMemcpyAsync(t.a, t.g, tensor_bytes, cudaMemcpyDeviceToDevice, 0);
        cudaMemcpyAsync(t.b, t.y, tensor_bytes, cudaMemcpyDeviceToDevice, 0);
      },
      warmup, reps);
  auto report = [&](const char* name, int blocks, double us) {
    std::printf("%5d x %4d %-6s  %-16s %5d blocks  %7.2f us  %5.2f TB/s  %5.1f%% of ceiling  %5.2fx memcpy time\n", s.rows, s.dim,
                s.random ? "random" : "sorted", name, blocks, us, bytes / us * 1e-6, 100.0 * bytes / (us * 1e-6) / ceiling,
                us / copy_us);
  };
  report("memcpy", 0, copy_us);
  // What every variant must compute, so that a fast one is not a wrong one:
  // a = g on set 0, and where it sums, each tile's column sums of g * y in
  // row order from +0 (fp32, no contraction), bit for bit.
  const size_t elems = tensor_bytes / 2;
  std::vector<uint16_t> g0(elems), y0(elems), got(elems);
  cuda_ok(cudaMemcpy(g0.data(), set[0].g, tensor_bytes, cudaMemcpyDeviceToHost), "copy g back");
  cuda_ok(cudaMemcpy(y0.data(), set[0].y, tensor_bytes, cudaMemcpyDeviceToHost), "copy y back");
  auto widen = [](uint16_t v) {
    const uint32_t u = uint32_t(v) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  };
  std::vector<float> got_sums(tiles.size() * size_t(s.dim));
  // The column sums in the order a variant adds: groups of `group` consecutive
  // tile rows added first (1: plain row order).
  auto host_sums = [&](int group) {
    std::vector<float> want(got_sums.size());
    for (size_t k = 0; k < tiles.size(); ++k)
      for (int c = 0; c < s.dim; ++c) {
        volatile float acc = 0.0f;  // volatile: one rounding a product and a sum, as on the device
        for (int i0 = 0; i0 < tiles[k].n; i0 += group) {
          volatile float part = 0.0f;
          for (int i = i0; i < std::min(i0 + group, tiles[k].n); ++i) {
            const size_t e = size_t(rows[size_t(tiles[k].start + i)]) * size_t(s.dim) + size_t(c);
            volatile float term = widen(g0[e]) * widen(y0[e]);
            part = i == i0 ? float(term) : part + term;
          }
          acc = acc + part;
        }
        want[k * size_t(s.dim) + size_t(c)] = acc;
      }
    return want;
  };
  const std::vector<float> want1 = host_sums(1), want2 = host_sums(2), want4 = host_sums(4), want8 = host_sums(8);
  auto time_kernel = [&](const char* name, dim3 grid, size_t smem, auto launch) {
    cuda_ok(cudaMemset(const_cast<uint4*>(set[0].a), 0, tensor_bytes), "clear a");
    cuda_ok(cudaMemset(d_partials, 0xff, got_sums.size() * sizeof(float)), "clear partials");
    launch(set[0], grid, smem);
    cuda_ok(cudaDeviceSynchronize(), name);
    cuda_ok(cudaMemcpy(got.data(), set[0].a, tensor_bytes, cudaMemcpyDeviceToHost), "copy a back");
    cuda_ok(cudaMemcpy(got_sums.data(), d_partials, got_sums.size() * sizeof(float), cudaMemcpyDeviceToHost), "copy sums back");
    const bool copy_ok = got == g0;
    // "+sums": row order; "gN+sums": groups of N rows first.
    const std::vector<float>* want = nullptr;
    if (std::strstr(name, "sums")) want = &want1;
    if (std::strstr(name, "g2")) want = &want2;
    if (std::strstr(name, "g4")) want = &want4;
    if (std::strstr(name, "g8")) want = &want8;
    const bool sums_ok = !want || std::memcmp(got_sums.data(), want->data(), want->size() * sizeof(float)) == 0;
    const double us = median_us(
        [&](int i) {
          launch(set[size_t(i % sets)], grid, smem);
          cuda_ok(cudaGetLastError(), name);
        },
        warmup, reps);
    report(name, int(grid.x * grid.y), us);
    if (!copy_ok || !sums_ok) {
      std::printf("  WRONG: %s%s\n", copy_ok ? "" : "a != g ", sums_ok ? "" : "column sums differ from the host's");
      wrong = true;
    }
  };
  const int row_groups = (s.rows + 3) / 4;
  time_kernel("rows", dim3(unsigned(row_groups)), 0,
              [&](const Tensors& t, dim3 g, size_t) { rows_kernel<4><<<g, kThreads>>>(t, d_rows, s.rows, row_vecs); });
  const unsigned ntiles = unsigned(tiles.size());
  const unsigned chunks512 = unsigned((row_vecs + 31) / 32);
  time_kernel("rows-grid", dim3(chunks512 * ntiles), 0,
              [&](const Tensors& t, dim3 g, size_t) { rows_kernel<4><<<g, kThreads>>>(t, d_rows, s.rows, row_vecs); });
  using no = std::false_type;
  using yes = std::true_type;
  // smem: the tile's row ids staged in shared memory as int64 first, as the
  // one-kernel backward holds them (names end in "-s"), else read from the
  // global int row list at each use.
  auto pieces = [&](auto piece_bytes, auto sync, auto smem_rows, const char* name) {
    constexpr int B = decltype(piece_bytes)::value;
    constexpr bool S = decltype(sync)::value, M = decltype(smem_rows)::value;
    time_kernel(name, dim3(unsigned((row_vecs + B / 16 - 1) / (B / 16)), ntiles), 0,
                [&](const Tensors& t, dim3 g, size_t) { pieces_kernel<B, S, M><<<g, kThreads>>>(t, d_rows, d_tiles, row_vecs); });
  };
  using p512 = std::integral_constant<int, 512>;
  pieces(p512{}, no{}, no{}, "pieces-512");
  pieces(p512{}, no{}, yes{}, "pieces-512-s");
  pieces(std::integral_constant<int, 1024>{}, no{}, no{}, "pieces-1024");
  pieces(p512{}, yes{}, no{}, "pieces-512+sync");
  pieces(p512{}, yes{}, yes{}, "pieces-512+sync-s");
  auto regs = [&](auto rows_per_thread, auto prefetch, auto unroll, auto smem_rows, const char* name) {
    constexpr int R = decltype(rows_per_thread)::value;
    constexpr bool P = decltype(prefetch)::value, U = decltype(unroll)::value, M = decltype(smem_rows)::value;
    const size_t smem = size_t(2) * (kThreads / 32) * R * 256 * sizeof(float);
    cuda_ok(cudaFuncSetAttribute(regs_kernel<R, P, U, M>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)), "smem attribute");
    cuda_ok(cudaFuncSetAttribute(regs_kernel<R, P, U, M>, cudaFuncAttributePreferredSharedMemoryCarveout, 100), "carveout");
    time_kernel(name, dim3(chunks512, ntiles), smem, [&](const Tensors& t, dim3 g, size_t m) {
      regs_kernel<R, P, U, M><<<g, kThreads, m>>>(t, d_rows, d_tiles, row_vecs, t.g, d_partials);
    });
  };
  using r4 = std::integral_constant<int, 4>;
  regs(r4{}, no{}, yes{}, no{}, "regs4u+sums");
  regs(r4{}, no{}, yes{}, yes{}, "regs4u+sums-s");
  regs(r4{}, yes{}, yes{}, yes{}, "regs4u+pf+sums-s");
  regs(std::integral_constant<int, 2>{}, yes{}, yes{}, yes{}, "regs2u+pf+sums-s");
  auto grouped = [&](auto rows_per_thread, auto prefetch, auto smem_rows, const char* name) {
    constexpr int R = decltype(rows_per_thread)::value;
    constexpr bool P = decltype(prefetch)::value, M = decltype(smem_rows)::value;
    time_kernel(name, dim3(chunks512, ntiles), 0, [&](const Tensors& t, dim3 g, size_t) {
      grouped_kernel<R, P, M><<<g, kThreads>>>(t, d_rows, d_tiles, row_vecs, t.g, d_partials);
    });
  };
  grouped(r4{}, no{}, no{}, "regs-g4+sums");
  grouped(r4{}, no{}, yes{}, "regs-g4+sums-s");
  auto pipe = [&](auto piece_bytes, auto sums, auto smem_rows, const char* name) {
    constexpr int B = decltype(piece_bytes)::value;
    constexpr bool S = decltype(sums)::value, M = decltype(smem_rows)::value;
    const size_t smem = size_t(kDepth) * kStageRows * B * 2;
    cuda_ok(cudaFuncSetAttribute(pipe_kernel<B, S, M>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)), "smem attribute");
    cuda_ok(cudaFuncSetAttribute(pipe_kernel<B, S, M>, cudaFuncAttributePreferredSharedMemoryCarveout, 100), "carveout");
    time_kernel(name, dim3(unsigned((row_vecs + B / 16 - 1) / (B / 16)), ntiles), smem, [&](const Tensors& t, dim3 g, size_t m) {
      pipe_kernel<B, S, M><<<g, kThreads, m>>>(t, d_rows, d_tiles, row_vecs, d_partials);
    });
  };
  pipe(p512{}, no{}, no{}, "pipe-512");
  pipe(p512{}, no{}, yes{}, "pipe-512-s");
  pipe(p512{}, yes{}, no{}, "pipe-512+sums");
  pipe(p512{}, yes{}, yes{}, "pipe-512+sums-s");
  for (void* p : owned) cudaFree(p);
  cudaFree(d_rows);
  cudaFree(d_tiles);
  cudaFree(d_partials);
  cuda_ok(cudaGetLastError(), "after the shape");
}

}  // namespace
}  // namespace bench
}  // namespace gatecheck

int main(int argc, char** argv) {
  using namespace gatecheck::bench;
  CLI::App app{"The one-kernel backward's traffic (2 reads, 2 writes, bf16) in several access patterns, timed against memcpy"};
  std::vector<int> rows{4097}, dims{3072, 5376};
  int reps = 60;
  app.add_option("--rows", rows, "row counts")->check(CLI::Range(1, 1 << 20));
  app.add_option("--dims", dims, "dims (multiples of 8)")->check(CLI::Range(8, 1 << 16));
  app.add_option("--reps", reps, "timed runs a variant (median)")->check(CLI::Range(5, 10000));
  CLI11_PARSE(app, argc, argv);
  for (int d : dims)
    if (d % 8 != 0) {
      std::fprintf(stderr, "--dims: %d is not a multiple of 8 (the variants move whole 16-byte vectors)\n", d);
      return 2;
    }
  try {
    const Warmup warmup;
    const double ceiling = copy_bandwidth(size_t(1) << 31, 20);
    std::printf("copy ceiling (2 GiB device-to-device): %.3f TB/s; empty kernel (1056 blocks): %.2f us\n", ceiling * 1e-12,
                empty_kernel_us(1056, warmup, reps));
    bool wrong = false;
    for (int r : rows)
      for (int d : dims)
        for (bool random : {false, true}) run_shape({r, d, random}, reps, warmup, ceiling, wrong);
    if (wrong) {
      std::fprintf(stderr, "gatecheck-pattern-bench: a variant computed the wrong result (WRONG above); its time means nothing\n");
      return 1;
    }
    std::printf("every variant: a = g bit for bit, and the summing ones' column sums equal the host's\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gatecheck-pattern-bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
