// Backward tile work through an asynchronous copy pipeline, and the one-kernel
// backward for short problems that builds its own index plan.
//
// The sum of a tile is sequential (fp32, row order, the host twin's order),
// but its loads need not be: cp.async keeps kPipeDepth stages of rows in
// flight per block without holding them in registers, so that few long tiles
// keep more bytes in flight (Little's law). On the H200 it beats the
// register-staged and per-thread kernels where few bytes are in flight
// (docs/kernel-design.md, "The copy pipeline").
//
//   bwd_pipe_kernel   tiles from the index plan in memory (fold kernel after)
//   bwd_fused_kernel  up to kFusedMaxRows rows and kFusedMaxGates gates: each
//                     block reads the whole index, checks it, finds its own
//                     (gate, tile) and the tile's rows by counting, does the
//                     tile, and the last tile of a gate to finish folds the
//                     gate's partials in tile order. One launch in all.
#pragma once

#include <cstdint>
#include <type_traits>

#include "gate_residual_cuda_kernels.cuh"

namespace gatecheck {
namespace cuda_detail {

constexpr int kPipeThreads = 256;
// RowBytes (a template parameter): bytes of one row per block and tensor, 256, 448 or 512.
constexpr int kPipeStageRows = 16;
// Stages in flight: 4 (a measuring build may set GATECHECK_PIPE_DEPTH, timed
// by the device stage `ab`; the shared memory grows with it).
#ifndef GATECHECK_PIPE_DEPTH
#define GATECHECK_PIPE_DEPTH 4
#endif
constexpr int kPipeDepth = GATECHECK_PIPE_DEPTH;
static_assert(kPipeDepth >= 2 && kPipeDepth <= 8, "pipeline depth");
// Column chunks (blocks along a row) of a pipeline kernel: rows of `dim`
// elements of `elem` bytes, `row_bytes` per block.
__host__ __device__ constexpr int64_t pipe_chunks(int64_t dim, int elem, int row_bytes) {
  return (dim + row_bytes / elem - 1) / (row_bytes / elem);
}
// Dynamic shared memory of the pipeline: g and y, `depth` stages (64 KiB at 512 B and 4).
__host__ __device__ constexpr int pipe_smem_bytes(int row_bytes, int depth = kPipeDepth) {
  return depth * kPipeStageRows * row_bytes * 2;
}

__device__ __forceinline__ void copy16_async(void* smem, const void* gmem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem) : "memory");
}
__device__ __forceinline__ void copy8_async(void* smem, const void* gmem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(s), "l"(gmem) : "memory");
}
__device__ __forceinline__ void commit_copies() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int Pending>
__device__ __forceinline__ void wait_copies() {
  asm volatile("cp.async.wait_group %0;" ::"n"(Pending) : "memory");
}

// Phase timing of the one-kernel backward (a measuring build only: compile
// with -DGATECHECK_PIPE_PHASES; otherwise PhaseClock is empty and costs
// nothing). Lane 0 of every warp adds the SM cycles it spent in each phase;
// gate_residual_cuda_pipe_phases() reads and clears the totals.
enum PipePhase { kPhasePlan, kPhaseIssue, kPhaseWait, kPhaseBarrier1, kPhasePassA, kPhasePassB, kPhaseBarrier2, kPhaseTail, kPhases };
#ifdef GATECHECK_PIPE_PHASES
__device__ unsigned long long g_pipe_phase_cycles[kPhases];
__device__ unsigned long long g_pipe_phase_warps;
__device__ __forceinline__ long long phase_now() {
#ifdef __CUDA_ARCH__
  return clock64();
#else
  return 0;  // the host pass of nvcc: never called
#endif
}
struct PhaseClock {
  long long t = phase_now();
  unsigned long long acc[kPhases] = {};
  __device__ void lap(int k) {
    const long long n = phase_now();
    acc[k] += (unsigned long long)(n - t);
    t = n;
  }
  __device__ void flush() {
    if ((threadIdx.x & 31) != 0) return;
    for (int k = 0; k < kPhases; ++k) atomicAdd(&g_pipe_phase_cycles[k], acc[k]);
    atomicAdd(&g_pipe_phase_warps, 1ull);
  }
};
#else
struct PhaseClock {
  __device__ void lap(int) {}
  __device__ void flush() {}
};
#endif

// Columns [c0, c0 + RowBytes / sizeof(T)) of the tile rows[0, n) of gate
// `gate`, by a block of Threads threads: writes grad_res and grad_y, and
// returns in acc[] the fp32 sums of g*y in row order from +0 of the Cols
// columns from pipe_sum_col<Cols>(c0) (threads below CW / Cols; one
// Cols-element shared load per row and tensor). Needs dim * sizeof(T) and
// every row start 16-byte aligned, and dim a multiple of Cols. One barrier a
// stage: after it, every copy of the stage has landed and every thread is done
// with the previous stage, whose buffer the next copies refill. Ends with a
// barrier, so smem may be reused at once.
template <int Cols>
__device__ __forceinline__ int64_t pipe_sum_col(int64_t c0) { return c0 + Cols * int64_t(threadIdx.x); }

//
// The sums go to `acc`: fp32 sums (float[Cols]), or any accumulator with
// clear() and add(column, term), such as the reproducible mode's
// BinnedTileSum, which may run without grad_y (a partial: then neither grad_res
// nor grad_y is written, and the gate is not read).
template <int Cols>
__device__ __forceinline__ void pipe_acc_clear(float (&acc)[Cols]) {
#pragma unroll
  for (int j = 0; j < Cols; ++j) acc[j] = 0.0f;
}
template <int Cols>
__device__ __forceinline__ void pipe_acc_add(float (&acc)[Cols], int j, float t) {
  acc[j] = gate_residual_accumulate(acc[j], t);
}
template <class Sum>
__device__ __forceinline__ void pipe_acc_clear(Sum& acc) { acc.clear(); }
template <class Sum>
__device__ __forceinline__ void pipe_acc_add(Sum& acc, int j, float t) { acc.add(j, t); }

//
// RowGroups > 1 (order-free accumulators only): the columns' sums are split
// over RowGroups groups of CW / Cols threads, group k taking rows k,
// k + RowGroups, ... of each stage; the caller merges them.
//
// Depth: stages of shared memory (Depth - 1 in flight while one is summed).
template <class T, int RowBytes, int Threads, int Cols, int RowGroups = 1, int Depth = kPipeDepth, class Acc>
__device__ void pipe_tile(const BwdArgs<T>& a, const int64_t* rows, int n, int64_t gate, int64_t c0,
                          unsigned char* smem, PhaseClock& clk, Acc& acc) {
  static_assert(RowGroups == 1 || !std::is_array<Acc>::value, "fp32 sums keep the row order: one row group");
  constexpr int N = 16 / int(sizeof(T));           // elements per 16-byte copy
  constexpr int CW = RowBytes / int(sizeof(T));     // columns per block
  constexpr int kCopies = RowBytes / 16;            // copies per row and tensor
  constexpr int kGroups = Threads / kCopies;        // rows copied at once
  static_assert(RowBytes % 16 == 0 && kGroups >= 1, "whole 16-byte copies, at least one row at once");  // threads past kGroups rows idle
  const int part = int(threadIdx.x) % kCopies, group = int(threadIdx.x) / kCopies;
  const int64_t c = c0 + part * N;
  // Where kCopies does not divide Threads, the threads past kGroups rows copy nothing.
  const bool col_ok = c < a.dim && (Threads % kCopies == 0 || group < kGroups);
  T* gs = reinterpret_cast<T*>(smem);  // [Depth][kPipeStageRows][CW], pipe_smem_bytes(RowBytes, Depth) in all
  T* ys = gs + Depth * kPipeStageRows * CW;
  const int stages = (n + kPipeStageRows - 1) / kPipeStageRows;
  auto issue = [&](int s) {
    if (s < stages && col_ok) {
      const int buf = s % Depth;
#pragma unroll
      for (int r = group; r < kPipeStageRows; r += kGroups) {
        const int i = s * kPipeStageRows + r;
        if (i >= n) break;
        const int64_t o = rows[i] * a.dim + c;
        const int so = (buf * kPipeStageRows + r) * CW + part * N;
        copy16_async(gs + so, a.grad_out + o);
        copy16_async(ys + so, a.y + o);
      }
    }
    commit_copies();  // empty groups past the end keep every thread's count alike
  };
  // fp32 sums always come with grad_y; another accumulator may come without (a partial)
  const bool outputs = col_ok && (std::is_array<Acc>::value || a.grad_y);
  Pack<T, N> gk;
  if (outputs) gk = load_pack<T, N>(a.gate + gate * a.gate_stride + c);
#pragma unroll
  for (int s = 0; s < Depth - 1; ++s) issue(s);
  constexpr int kSumThreads = CW / Cols;
  static_assert(kSumThreads * RowGroups <= Threads, "a thread for each column's row group");
  // (one row group: the thread's own index, as the fp32 kernels have always had it)
  const int sum_lane = RowGroups == 1 ? int(threadIdx.x) : int(threadIdx.x) % kSumThreads;
  const int row_group = RowGroups == 1 ? 0 : int(threadIdx.x) / kSumThreads;
  const bool sums = RowGroups == 1 ? int(threadIdx.x) < kSumThreads && pipe_sum_col<Cols>(c0) < a.dim
                                   : row_group < RowGroups && c0 + Cols * sum_lane < a.dim;
  pipe_acc_clear(acc);
  for (int s = 0; s < stages; ++s) {
    clk.lap(kPhaseTail);
    wait_copies<Depth - 2>();  // this thread's copies of stage s have landed
    clk.lap(kPhaseWait);
    __syncthreads();
    clk.lap(kPhaseBarrier1);
    issue(s + Depth - 1);  // into the buffer of stage s - 1, which every thread is done with
    clk.lap(kPhaseIssue);
    const int buf = s % Depth;
    if (outputs) {
#pragma unroll
      for (int r = group; r < kPipeStageRows; r += kGroups) {
        const int i = s * kPipeStageRows + r;
        if (i >= n) break;
        const int so = (buf * kPipeStageRows + r) * CW + part * N;
        const uint4 raw = *reinterpret_cast<const uint4*>(gs + so);
        Pack<T, N> gv, gy;
        memcpy(&gv, &raw, sizeof gv);
#pragma unroll
        for (int j = 0; j < N; ++j) gy.e[j] = gate_residual_grad_y(gv.e[j], gk.e[j]);
        const int64_t o = rows[i] * a.dim + c;
        if (a.grad_res) store_pack<T, N>(a.grad_res + o, gv);
        store_pack<T, N>(a.grad_y + o, gy);
      }
    }
    clk.lap(kPhasePassA);
    if (sums) {
      const int here = min(kPipeStageRows, n - s * kPipeStageRows);
      using Raw = typename RawOf<Cols * int(sizeof(T))>::type;
      const T* gcol = gs + buf * kPipeStageRows * CW + Cols * sum_lane;
      const T* ycol = ys + buf * kPipeStageRows * CW + Cols * sum_lane;
      // fp32 sums in row order (one row group); order-free sums this row group's
      // rows (four at a time, interleaved, was slower on the H200)
#pragma unroll 4
      for (int r = row_group; r < here; r += RowGroups) {
        const Raw gr = *reinterpret_cast<const Raw*>(gcol + r * CW), yr = *reinterpret_cast<const Raw*>(ycol + r * CW);
        Pack<T, Cols> gp, yp;
        memcpy(&gp, &gr, sizeof gr);
        memcpy(&yp, &yr, sizeof yr);
#pragma unroll
        for (int j = 0; j < Cols; ++j) pipe_acc_add(acc, j, gate_residual_grad_gate_term(gp.e[j], yp.e[j]));
      }
    }
    clk.lap(kPhasePassB);
  }
  wait_copies<0>();  // only empty groups remain
  __syncthreads();   // every thread is done with smem
  clk.lap(kPhaseBarrier2);
}

// A single-tile gate's columns: the fold of one partial from +0, rounded once.
template <class T, int Cols>
__device__ __forceinline__ void store_grad_gate(T* to, const float (&acc)[Cols]) {
#pragma unroll
  for (int j = 0; j < Cols; ++j) to[j] = gate_residual_grad_gate_finish<T>(gate_residual_accumulate(0.0f, acc[j]));
}

// A multi-tile gate's partials of this thread's columns (8-byte aligned for two).
template <int Cols>
__device__ __forceinline__ void store_partials(float* to, const float (&acc)[Cols]) {
  if constexpr (Cols == 2) *reinterpret_cast<float2*>(to) = make_float2(acc[0], acc[1]);
  else to[0] = acc[0];
}

// Tiles from the index plan in memory; multi-tile gates leave partials for fold_kernel.
template <class T, int RowBytes>
__global__ void __launch_bounds__(kPipeThreads) bwd_pipe_kernel(BwdArgs<T> a) {
  extern __shared__ __align__(16) unsigned char pipe_smem[];
  __shared__ int64_t tile_rows[kGradGateTileRows];
  constexpr int CW = RowBytes / int(sizeof(T)), Cols = 2;
  TileDesc d;
  if (!begin_tile(a, tile_rows, d)) return;
  const int n = int(d.end - d.begin);
  for (int64_t c0 = int64_t(blockIdx.y) * CW; c0 < a.dim; c0 += int64_t(gridDim.y) * CW) {
    PhaseClock unused;
    float acc[Cols];
    pipe_tile<T, RowBytes, kPipeThreads, Cols>(a, tile_rows, n, d.gate, c0, pipe_smem, unused, acc);
    const int64_t col = pipe_sum_col<Cols>(c0);
    if (int(threadIdx.x) < CW / Cols && col < a.dim) {
      if (d.slot < 0) store_grad_gate<T, Cols>(a.grad_gate + d.gate * a.dim + col, acc);
      else store_partials<Cols>(a.partials + d.slot * a.dim + col, acc);
    }
  }
}

// The reproducible mode's tiles through the pipeline: binned sums of Cols
// columns a thread, stored as the fp32 sums are (store_binned_tile). The
// copies in flight cost no registers, so the binned sums' registers (15 a
// column) do not cut the bytes in flight as they do in the per-thread tile
// kernel. Every thread sums: where a block's columns are
// fewer than its threads, row groups share each column's rows and merge their
// states through shared memory (binned sums are exact, so the split changes
// no bit). Depth: the pipeline's stages; its shared memory sets how many
// blocks an SM holds (4 stages at 512 B: 64 KiB, three blocks; 3 stages: 48
// KiB, four blocks, as many as its registers allow), and more warps hide more
// of the latency of each term's fp64 chain.
template <class T, int RowBytes, int Cols, int Depth = kPipeDepth>
__global__ void __launch_bounds__(kPipeThreads) bwd_pipe_binned_kernel(BwdArgs<T> a) {
  extern __shared__ __align__(16) unsigned char pipe_smem[];
  __shared__ int64_t tile_rows[kGradGateTileRows];
  constexpr int CW = RowBytes / int(sizeof(T)), kSumThreads = CW / Cols, kGroups = kPipeThreads / kSumThreads;
  static_assert(kGroups >= 1 && (kGroups - 1) * kSumThreads * Cols * kBinnedWords * 8 <= pipe_smem_bytes(RowBytes, Depth),
                "the row groups' states fit in the pipeline's shared memory");
  TileDesc d;
  if (!begin_tile(a, tile_rows, d)) return;
  const int n = int(d.end - d.begin);
  const int lane = int(threadIdx.x) % kSumThreads, group = int(threadIdx.x) / kSumThreads;
  for (int64_t c0 = int64_t(blockIdx.y) * CW; c0 < a.dim; c0 += int64_t(gridDim.y) * CW) {
    PhaseClock unused;
    BinnedTileSum<T, Cols> sum;
    pipe_tile<T, RowBytes, kPipeThreads, Cols, kGroups, Depth>(a, tile_rows, n, d.gate, c0, pipe_smem, unused, sum);
    const int64_t col = c0 + Cols * lane;
    auto* part = reinterpret_cast<uint64_t*>(pipe_smem);  // [kGroups - 1][kSumThreads][Cols][kBinnedWords]
    auto part_at = [&](int k, int j) { return part + (((k - 1) * kSumThreads + lane) * Cols + j) * kBinnedWords; };
    if constexpr (kGroups > 1) {  // pipe_tile ended with a barrier: its shared memory is free
      if (group >= 1 && group < kGroups && col < a.dim)
#pragma unroll
        for (int j = 0; j < Cols; ++j) sum.acc[j].to_words(part_at(group, j));
      __syncthreads();
    }
    if (group == 0 && col < a.dim) {  // (threads past the last row group hold nothing)
#pragma unroll
      for (int j = 0; j < Cols; ++j) {
        uint64_t w[kBinnedWords];
        sum.acc[j].to_words(w);
        for (int k = 1; k < kGroups; ++k) binned_combine(w, part_at(k, j));
        store_binned_tile(a, d, col + j, w);
      }
    }
    if constexpr (kGroups > 1) __syncthreads();  // the next column chunk's copies refill that memory
  }
}

// ---- one-kernel backward ----------------------------------------------------
constexpr int64_t kFusedMaxRows = 8192;  // every block stages the whole index (64 KiB at most)
constexpr int64_t kFusedMaxGates = 64;   // one warp scans the per-gate counts, two per lane
// Dynamic shared memory of the fused kernel: the pipeline's, or the raw index
// (8 bytes a row) if larger, then a byte per row's gate id (rounded up to 16).
__host__ __device__ constexpr int fused_gid_offset(int row_bytes, int64_t rows) {
  return pipe_smem_bytes(row_bytes) > int(rows) * 8 ? pipe_smem_bytes(row_bytes) : (int(rows) * 8 + 15) / 16 * 16;
}
__host__ __device__ constexpr int fused_smem_bytes(int row_bytes, int64_t rows) {
  return fused_gid_offset(row_bytes, rows) + (int(rows) + 15) / 16 * 16;
}

struct FusedPlan {
  const int64_t* index;
  int64_t rows, gates;
  unsigned long long* status;    // written by block (0, 0) only
  unsigned long long* counters;  // [gates][column chunks], zero between calls
  int gid_offset;                 // fused_gid_offset(RowBytes, rows)
  bool plan_only;                 // stop after the plan (to time it)
  cuda_status::Report* report;    // the stream's report of a failed call, filled by block (0, 0)
};

// This block's tile: rows [tile * kGradGateTileRows, ...) of `gate`'s own rows.
struct FusedTile {
  int64_t gate, slot0;  // slot0: the gate's first partial slot (tiles > 1)
  int tile, tiles, n;
};

__device__ __forceinline__ int warp_exclusive_sum(int x, int lane, int* total) {
  int inc = x;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const int v = __shfl_up_sync(0xffffffffu, inc, d);
    if (lane >= d) inc += v;
  }
  *total = __shfl_sync(0xffffffffu, inc, 31);
  return inc - x;
}

// Exclusive sum of x over the block's threads in thread order, and the total.
// wsum: Threads / 32 ints of shared memory, free again on return.
template <int Threads>
__device__ __forceinline__ int block_exclusive_sum(int x, int* total, int* wsum) {
  const int lane = int(threadIdx.x) & 31, warp = int(threadIdx.x) >> 5;
  int warp_total;
  const int ex = warp_exclusive_sum(x, lane, &warp_total);
  if (lane == 0) wsum[warp] = warp_total;
  __syncthreads();
  int before = 0, all = 0;
#pragma unroll
  for (int i = 0; i < Threads / 32; ++i) {
    const int v = wsum[i];
    before += i < warp ? v : 0;
    all += v;
  }
  __syncthreads();
  *total = all;
  return before + ex;
}

// The index plan of one block (tile blockIdx.y), from the whole index,
// staged in smem with one round of asynchronous copies (integer counting
// only, so nothing depends on timing): false if this block has no tile or the
// call failed (every block sees every row, so none writes anything then).
// Every block does this whole scan, so it is kept short: the rows of its gate
// are found 16 at a time per thread, by byte compares on the gate ids.
template <int Threads>
__device__ bool fused_plan(const FusedPlan& f, unsigned long long epoch, unsigned char* smem, int64_t* tile_rows,
                           FusedTile& ft) {
  __shared__ unsigned hist[kFusedMaxGates];
  __shared__ int wsum[Threads / 32];
  const int tid = int(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  const int rows = int(f.rows), gates = int(f.gates);
  const bool reporter = blockIdx.x == 0 && blockIdx.y == 0;
  const int64_t* raw = reinterpret_cast<const int64_t*>(smem);
  unsigned char* gid = smem + f.gid_offset;  // a byte per row, 0xff past the last row up to a multiple of 16
  for (int r = tid; r < rows; r += Threads) copy8_async(smem + 8 * r, f.index + r);
  commit_copies();
  for (int k = tid; k < gates; k += Threads) hist[k] = 0;
  if (tid < 16 && rows + tid < (rows + 15) / 16 * 16) gid[rows + tid] = 0xff;
  if (tid == 0) ft.gate = -1;
  wait_copies<0>();
  __syncthreads();
  bool bad = false;
  for (int r = tid; r < rows; r += Threads) {  // a row per thread: conflict-free 8-byte shared loads
    const int64_t v = raw[r];
    const bool ok = v >= 0 && v < gates;
    gid[r] = ok ? (unsigned char)v : 0xff;
    if (!ok) {
      bad = true;
      if (reporter) record_bad(f.status, epoch, r);
    } else {
      atomicAdd(&hist[int(v)], 1u);  // integer: the totals do not depend on timing
    }
  }
  if (__syncthreads_or(bad)) {
    if (reporter && tid == 0 && f.report) {  // the first bad row, from the staged index
      int r = 0;
      while (raw[r] >= 0 && raw[r] < gates) ++r;
      report_failed_call(f.report, cuda_status::encode(epoch, r), raw[r], f.gates, cuda_status::kReportedByBackward);
    }
    return false;
  }
  if (warp == 0) {  // gates 2*lane and 2*lane + 1: tiles and partial slots, scanned
    const int k0 = 2 * lane, k1 = k0 + 1;
    const PlanCount p0 = k0 < gates ? plan_count((long long)hist[k0]) : PlanCount{0, 0, 0, 0};
    const PlanCount p1 = k1 < gates ? plan_count((long long)hist[k1]) : PlanCount{0, 0, 0, 0};
    int tiles_total, slots_total;
    const int t0 = warp_exclusive_sum(int(p0.tiles + p1.tiles), lane, &tiles_total);
    const int s0 = warp_exclusive_sum(int(p0.slots + p1.slots), lane, &slots_total);
    const int b = int(blockIdx.y);
    const int64_t ks[2] = {k0, k1};
    const PlanCount ps[2] = {p0, p1};
    const int ts[2] = {t0, t0 + int(p0.tiles)}, ss[2] = {s0, s0 + int(p0.slots)};
#pragma unroll
    for (int j = 0; j < 2; ++j)
      if (ks[j] < gates && b >= ts[j] && b < ts[j] + ps[j].tiles) {
        ft.gate = ks[j];
        ft.tile = b - ts[j];
        ft.tiles = int(ps[j].tiles);
        ft.slot0 = ss[j];
        const long long left = ps[j].rows - (long long)ft.tile * kGradGateTileRows;
        ft.n = int(left < kGradGateTileRows ? left : kGradGateTileRows);
      }
  }
  __syncthreads();
  if (ft.gate < 0) return false;
  // Ordinal of each of this gate's rows among its rows in row order: each
  // thread takes 16 consecutive rows a round, counts its matches with SIMD
  // byte compares, and the block scans the counts in thread (= row) order.
  const unsigned key = 0x01010101u * unsigned(ft.gate);
  const int first = ft.tile * int(kGradGateTileRows);
  int before = 0;  // this gate's rows in earlier rounds
  for (int r0 = 0; r0 < rows && before < first + int(kGradGateTileRows); r0 += 16 * Threads) {
    const int rt = r0 + 16 * tid;
    uint4 ids = make_uint4(~0u, ~0u, ~0u, ~0u);
    if (rt < rows) ids = *reinterpret_cast<const uint4*>(gid + rt);
    const unsigned m[4] = {__vcmpeq4(ids.x, key) & 0x80808080u, __vcmpeq4(ids.y, key) & 0x80808080u,
                           __vcmpeq4(ids.z, key) & 0x80808080u, __vcmpeq4(ids.w, key) & 0x80808080u};
    const int mine = __popc(m[0]) + __popc(m[1]) + __popc(m[2]) + __popc(m[3]);
    int round_total;
    int ord = before + block_exclusive_sum<Threads>(mine, &round_total, wsum) - first;
#pragma unroll
    for (int j = 0; j < 4; ++j)
      for (unsigned bits = m[j]; bits; bits &= bits - 1u, ++ord)
        if (ord >= 0 && ord < int(kGradGateTileRows)) tile_rows[ord] = rt + 4 * j + (__ffs(int(bits)) - 1) / 8;
    before += round_total;
  }
  __syncthreads();  // tile_rows complete; the staged index is no longer read
  return true;
}

// Grid: (column chunks, tile bound). Tiles run along y, so that the blocks
// past the last tile (their number is known only on the device) come last.
// Threads per block and Cols summed per thread are the shape knobs (docs/kernel-design.md).
template <class T, int RowBytes, int Threads, int Cols>
__global__ void __launch_bounds__(Threads, 2) bwd_fused_kernel(BwdArgs<T> a, FusedPlan f) {
  extern __shared__ __align__(16) unsigned char pipe_smem[];
  __shared__ int64_t tile_rows[kGradGateTileRows];
  __shared__ FusedTile ft;
  __shared__ bool last;
  constexpr int CW = RowBytes / int(sizeof(T));
  wait_for_previous_kernel();  // launched with PDL: only its launch overlaps the previous kernel
  PhaseClock clk;
  const bool mine = fused_plan<Threads>(f, a.epoch, pipe_smem, tile_rows, ft);
  clk.lap(kPhasePlan);
  if (!mine || f.plan_only) {
    clk.flush();
    return;
  }
  const int64_t chunks = pipe_chunks(a.dim, int(sizeof(T)), RowBytes);
  for (int64_t c0 = int64_t(blockIdx.x) * CW; c0 < a.dim; c0 += int64_t(gridDim.x) * CW) {
    float acc[Cols];
    pipe_tile<T, RowBytes, Threads, Cols>(a, tile_rows, ft.n, ft.gate, c0, pipe_smem, clk, acc);
    const int64_t col = pipe_sum_col<Cols>(c0);
    const bool sums = int(threadIdx.x) < CW / Cols && col < a.dim;
    if (ft.tiles == 1) {
      if (sums) store_grad_gate<T, Cols>(a.grad_gate + ft.gate * a.dim + col, acc);
      continue;
    }
    if (sums) {
      store_partials<Cols>(a.partials + (ft.slot0 + ft.tile) * a.dim + col, acc);
      __threadfence();  // this thread's partials are visible before the block is counted
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      unsigned long long* counter = f.counters + ft.gate * chunks + c0 / CW;
      last = atomicAdd(counter, 1ull) == (unsigned long long)(ft.tiles - 1);
      if (last) *counter = 0;  // every tile has counted: back to zero for the next call
    }
    __syncthreads();
    if (last && sums) {  // the gate's tiles are all done: fold in tile order from +0, round once
      __threadfence();
      const float* p = a.partials + ft.slot0 * a.dim + col;
      float t[Cols];
#pragma unroll
      for (int j = 0; j < Cols; ++j) t[j] = 0.0f;
      for (int i = 0; i < ft.tiles; ++i) {
#pragma unroll
        for (int j = 0; j < Cols; ++j) t[j] = gate_residual_accumulate(t[j], __ldcg(p + i * a.dim + j));
      }
#pragma unroll
      for (int j = 0; j < Cols; ++j) a.grad_gate[ft.gate * a.dim + col + j] = gate_residual_grad_gate_finish<T>(t[j]);
    }
  }
  clk.lap(kPhaseTail);
  clk.flush();
}

}  // namespace cuda_detail
}  // namespace gatecheck
