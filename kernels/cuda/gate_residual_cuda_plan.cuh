// The backward's index plan: the gate-sorted row order and the tile
// descriptors the tile kernels walk. Two ways to build it (chosen in
// gate_residual_cuda.cu):
//   counting path (up to kCountGates gates): plan_count_kernel (per-chunk
//     gate histograms, the index check) + plan_scatter_kernel (every chunk
//     scans the histograms, sorts its own rows by gate in one block, stably,
//     and writes them to their place; block 0 writes the plan). Two launches;
//     up to kSmallPlanRows rows, plan_small_kernel does it all in one block.
//   CUB path (any number of gates): bwd_prepare_kernel, a CUB stable radix
//     sort, then plan_block_kernel or a CUB scan + fill_tiles_kernel.
// Both give the same order: each gate's rows in row order.
#pragma once

#include <cstdint>

#include "../gate_residual_math.h"
#include "block_scan.cuh"
#include "gate_residual_cuda_device.cuh"

namespace gatecheck {
namespace cuda_detail {

// One tile of grad_gate work: rows [begin, end) of the gate-sorted row order,
// all of gate `gate`. slot < 0: the gate's only tile, which writes grad_gate
// itself; otherwise the fp32 partial goes to partials[slot], folded later.
struct alignas(16) TileDesc {
  int64_t gate, begin, end, slot;
};

// A gate of several tiles, for fold_kernel: its partials are slots
// [slot0, slot0 + tiles).
struct alignas(16) FoldDesc {
  int64_t gate, slot0, tiles, unused;
};

// A 32-byte record in two 16-byte stores. The plan kernels run on one or a
// few SMs, where stores are the cost: on the H200 (ncu) plan_small_kernel spent
// about 11 of its 26 us writing descriptors as 8-byte stores, a thread per
// four consecutive gates (32 cache lines per warp store).
__device__ __forceinline__ void store_record(void* to, int64_t a, int64_t b, int64_t c, int64_t d) {
  longlong2* p = static_cast<longlong2*>(to);
  p[0] = make_longlong2(a, b);
  p[1] = make_longlong2(c, d);
}

// Per-gate counts, exclusively scanned over gates: tiles (every gate has at
// least one, so unused gates get their zeros written), partial slots (only
// gates of several tiles use them), how many such multi-tile gates precede,
// and rows (so the scan also gives each gate's first position in the sorted
// order).
struct PlanCount {
  long long tiles, slots, multi, rows;
};
struct PlanCountSum {
  __host__ __device__ PlanCount operator()(const PlanCount& a, const PlanCount& b) const {
    return PlanCount{a.tiles + b.tiles, a.slots + b.slots, a.multi + b.multi, a.rows + b.rows};
  }
};
__host__ __device__ __forceinline__ PlanCount plan_count(long long n) {
  const long long t = n <= kGradGateTileRows ? 1 : (n + kGradGateTileRows - 1) / kGradGateTileRows;
  return t > 1 ? PlanCount{t, t, 1, n} : PlanCount{1, 0, 0, n};
}
// The block scan of the plan kernels (block_scan.cuh).
__host__ __device__ __forceinline__ PlanCount operator+(const PlanCount& a, const PlanCount& b) {
  return PlanCountSum{}(a, b);
}
__device__ __forceinline__ PlanCount shfl_up(const PlanCount& v, int d) {
  return PlanCount{__shfl_up_sync(0xffffffffu, v.tiles, d), __shfl_up_sync(0xffffffffu, v.slots, d),
                   __shfl_up_sync(0xffffffffu, v.multi, d), __shfl_up_sync(0xffffffffu, v.rows, d)};
}
template <int Threads>
using PlanScan = BlockRecordScan<Threads, PlanCount>;

// Gate k's counts; k == gates gives zeros, so an exclusive scan over gates + 1
// entries ends with the totals.
struct PlanCountOf {
  const unsigned long long* counts;
  int64_t gates;
  __host__ __device__ PlanCount operator()(int64_t k) const {
    return k >= gates ? PlanCount{0, 0, 0, 0} : plan_count((long long)counts[k]);
  }
};

// count[v] += 1 for each lane whose row is valid (ok), with one integer
// atomic per distinct gate in the warp: the totals do not depend on timing.
// Every lane of the warp must call it together.
template <class Count>
__device__ __forceinline__ void count_rows_per_gate(Count* count, bool ok, int64_t v, int lane) {
  const unsigned peers = __match_any_sync(0xffffffffu, ok ? (unsigned long long)v : ~0ull);
  if (ok && lane == __ffs(peers) - 1) atomicAdd(&count[v], Count(__popc(peers)));
}

// Backward prologue: the index check, the row ids to sort, and each gate's
// row count (integer atomics, aggregated per warp; counts start at zero and
// the plan step zeroes them again after use).
__global__ void bwd_prepare_kernel(const int64_t* index, int64_t rows, int64_t gates,
                                   unsigned long long* status, unsigned long long epoch,
                                   int64_t* row_ids, unsigned long long* counts) {
  const int lane = int(threadIdx.x & 31);
  // Whole warps iterate together, so the warp-wide match below is converged.
  for (int64_t i = global_thread(); i - lane < rows; i += global_threads()) {
    const bool in = i < rows;
    const int64_t v = in ? index[i] : -1;
    const bool ok = in && v >= 0 && v < gates;
    if (in) {
      row_ids[i] = i;
      if (!ok) record_bad(status, epoch, i);
    }
    count_rows_per_gate(counts, ok, v, lane);
  }
}

// Writes gate k's tile descriptors (tiles of kGradGateTileRows rows, counted
// within the gate's own rows in row order) from its scanned counts.
__device__ __forceinline__ void write_tiles(int64_t k, const PlanCount& at, long long n, TileDesc* tiles,
                                            FoldDesc* folds) {
  const PlanCount own = plan_count(n);
  for (int64_t t = 0; t < own.tiles; ++t) {
    const int64_t tb = at.rows + t * kGradGateTileRows;
    const int64_t te = tb + kGradGateTileRows < at.rows + n ? tb + kGradGateTileRows : at.rows + n;
    store_record(tiles + at.tiles + t, k, tb, te, own.tiles > 1 ? at.slots + t : -1);
  }
  if (own.tiles > 1) store_record(folds + at.multi, k, at.slots, own.tiles, 0);
}

// Walks gates [0, gates) in rounds of Threads, a gate per thread (a warp's
// descriptor stores then fall on consecutive records), and scans their
// PlanCounts over the block in gate order: on_gate(k, at, n) gets gate k's
// rows n = rows_of(k) and its scanned position at. Returns the totals. Called
// by every thread of the block.
template <int Threads, class RowsOf, class OnGate>
__device__ __forceinline__ PlanCount scan_gates(int64_t gates, typename PlanScan<Threads>::TempStorage& tmp,
                                                RowsOf rows_of, OnGate on_gate) {
  PlanCount carry{0, 0, 0, 0};
  for (int64_t base = 0; base < gates; base += Threads) {
    const int64_t k = base + int64_t(threadIdx.x);
    const long long n = k < gates ? rows_of(k) : 0;
    PlanCount before, total;
    PlanScan<Threads>(tmp).exclusive(k < gates ? plan_count(n) : PlanCount{0, 0, 0, 0}, before, total);
    if (k < gates) on_gate(k, carry + before, n);
    carry = carry + total;
  }
  return carry;
}

// The plan for up to kPlanBlockGates gates in one block: scan the counts,
// write the tile descriptors, zero the counts for the next call. (One launch
// instead of a device-wide scan's two plus a fill kernel; measured on the
// H200 it wins for few gates and loses badly at 10922, see docs/kernel-design.md.)
constexpr int kPlanThreads = 1024;
constexpr int64_t kPlanBlockGates = 2048;

// The per-gate plan[k] is left to the device-wide path (fill_tiles_kernel
// reads it); fold_kernel reads FoldDesc records, and the tile kernels only
// the totals plan[gates].
__global__ void __launch_bounds__(kPlanThreads) plan_block_kernel(
    unsigned long long* counts, int64_t gates, PlanCount* plan, TileDesc* tiles, FoldDesc* folds,
    const unsigned long long* status, unsigned long long epoch) {
  __shared__ PlanScan<kPlanThreads>::TempStorage scan_tmp;
  wait_for_previous_kernel();
  let_next_kernel_start();
  const bool failed = call_failed(status, epoch);
  const PlanCount total = scan_gates<kPlanThreads>(
      gates, scan_tmp, [&](int64_t k) { return (long long)counts[k]; },
      [&](int64_t k, const PlanCount& at, long long n) {
        if (!failed) write_tiles(k, at, n, tiles, folds);
        counts[k] = 0;
      });
  if (threadIdx.x == 0) plan[gates] = total;
}

// The same for more gates, after a device-wide scan: one thread per gate.
__global__ void fill_tiles_kernel(unsigned long long* counts, const PlanCount* plan, int64_t gates,
                                  TileDesc* tiles, FoldDesc* folds, const unsigned long long* status,
                                  unsigned long long epoch) {
  wait_for_previous_kernel();
  let_next_kernel_start();
  const bool failed = call_failed(status, epoch);
  for (int64_t k = global_thread(); k < gates; k += global_threads()) {
    if (!failed) write_tiles(k, plan[k], (long long)counts[k], tiles, folds);
    counts[k] = 0;
  }
}


// ---- counting path ---------------------------------------------------------
// Rows are cut into chunks of kSortChunk; chunk b's rows of gate g go to
// gate_start[g] + (rows of g in chunks < b) + (rank among g's rows in chunk b).
constexpr int kSortThreads = 512;
constexpr int kSortItems = 8;
constexpr int kSortChunk = kSortThreads * kSortItems;
constexpr int64_t kCountGates = 2048;      // per-gate state lives in shared memory
constexpr int64_t kCountHistMax = 1 << 16;  // gates x chunks each scatter block reads

// Histogram of chunk blockIdx.x: hist[g * chunks + b]; records bad rows. The
// first kernel of the backward, launched without PDL (see check_index_kernel).
__global__ void __launch_bounds__(kSortThreads) plan_count_kernel(const int64_t* index, int64_t rows,
                                                                  int64_t gates, unsigned long long* status,
                                                                  unsigned long long epoch, unsigned* hist,
                                                                  int chunks) {
  __shared__ unsigned count[kCountGates];
  let_next_kernel_start();
  for (int g = threadIdx.x; g < gates; g += blockDim.x) count[g] = 0;
  __syncthreads();
  const int64_t base = int64_t(blockIdx.x) * kSortChunk;
  const int lane = int(threadIdx.x & 31);
  // Every load first, then the warp-wide counts: a load inside the loop of
  // matches made each thread wait out kSortItems load latencies in a row.
  int64_t v[kSortItems];
#pragma unroll
  for (int i = 0; i < kSortItems; ++i) {
    const int64_t r = base + i * kSortThreads + threadIdx.x;
    v[i] = r < rows ? index[r] : -1;
  }
#pragma unroll
  for (int i = 0; i < kSortItems; ++i) {  // whole warps: kSortThreads % 32 == 0
    const int64_t r = base + i * kSortThreads + threadIdx.x;
    const bool in = r < rows;
    const bool ok = in && v[i] >= 0 && v[i] < gates;
    if (in && !ok) record_bad(status, epoch, r);
    count_rows_per_gate(count, ok, v[i], lane);
  }
  __syncthreads();
  for (int g = threadIdx.x; g < gates; g += blockDim.x) hist[int64_t(g) * chunks + blockIdx.x] = count[g];
}

// One block per chunk. Every block scans the per-gate totals (so it knows
// where each gate starts), adds the counts of earlier chunks, sorts its own
// rows by gate with a block radix sort (stable: an LSD radix sort's passes
// must be, and the keys go in in row order, blocked), and writes each row id
// to order[]. Block 0 also writes the totals and the descriptors.
template <class BlockSort>
__global__ void __launch_bounds__(kSortThreads, 1) plan_scatter_kernel(
    const int64_t* index, int64_t rows, int64_t gates, int end_bit, const unsigned* hist, int chunks,
    PlanCount* plan, TileDesc* tiles, FoldDesc* folds, int64_t* order, const unsigned long long* status,
    unsigned long long epoch) {
  __shared__ union {
    typename BlockSort::TempStorage sort;
    PlanScan<kSortThreads>::TempStorage scan;
    unsigned keys[kSortChunk];
  } tmp;
  __shared__ long long offset[kCountGates];  // where this chunk's rows of gate g begin, minus their first sorted position
  __shared__ unsigned total_rows[kCountGates];  // the counting path needs rows < 2^31
  wait_for_previous_kernel();
  let_next_kernel_start();
  if (call_failed(status, epoch)) return;
  const int b = int(blockIdx.x);
  // Per gate: its total rows, and its rows in chunks before this one (integer
  // sums, so the order of the adds does not matter): a thread per gate for few
  // chunks, else a warp per gate.
  if (chunks <= 8) {
    for (int64_t k = threadIdx.x; k < gates; k += kSortThreads) {
      unsigned t = 0, e = 0;
      for (int c = 0; c < chunks; ++c) {
        const unsigned x = hist[k * chunks + c];
        t += x;
        e += c < b ? x : 0u;
      }
      total_rows[k] = t;
      offset[k] = e;
    }
  } else {
    const int lane = int(threadIdx.x & 31), warp = int(threadIdx.x >> 5);
    for (int64_t k = warp; k < gates; k += kSortThreads / 32) {
      unsigned t = 0, e = 0;
      for (int c = lane; c < chunks; c += 32) {
        const unsigned x = hist[k * chunks + c];
        t += x;
        e += c < b ? x : 0u;
      }
      for (int d = 16; d > 0; d >>= 1) {
        t += __shfl_down_sync(0xffffffffu, t, d);
        e += __shfl_down_sync(0xffffffffu, e, d);
      }
      if (lane == 0) {
        total_rows[k] = t;
        offset[k] = e;
      }
    }
  }
  __syncthreads();
  const PlanCount total = scan_gates<kSortThreads>(
      gates, tmp.scan, [&](int64_t k) { return (long long)total_rows[k]; },
      [&](int64_t k, const PlanCount& at, long long n) {
        offset[k] += at.rows;
        if (b == 0) write_tiles(k, at, n, tiles, folds);
      });
  if (b == 0 && threadIdx.x == 0) plan[gates] = total;

  const int64_t row0 = int64_t(b) * kSortChunk;
  unsigned key[kSortItems];
  int pos[kSortItems];
#pragma unroll
  for (int i = 0; i < kSortItems; ++i) {
    const int p = int(threadIdx.x) * kSortItems + i;
    key[i] = row0 + p < rows ? unsigned(index[row0 + p]) : unsigned(gates);  // padding sorts last
    pos[i] = p;
  }
  BlockSort(tmp.sort).Sort(key, pos, 0, end_bit);
  __syncthreads();
#pragma unroll
  for (int i = 0; i < kSortItems; ++i) tmp.keys[threadIdx.x * kSortItems + i] = key[i];
  __syncthreads();
#pragma unroll
  for (int i = 0; i < kSortItems; ++i) {  // the first sorted position of each gate present
    const int p = int(threadIdx.x) * kSortItems + i;
    if (key[i] < gates && (p == 0 || tmp.keys[p - 1] != key[i])) offset[key[i]] -= p;
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < kSortItems; ++i) {
    const int p = int(threadIdx.x) * kSortItems + i;
    if (key[i] < gates) order[offset[key[i]] + p] = row0 + pos[i];
  }
}

// ---- one-block plan ----------------------------------------------------------
// The counting path for short problems (up to kSmallPlanRows rows and
// kSmallPlanGates gates) in one block and one launch. Each warp owns a run of
// consecutive rows: it counts them per gate and ranks each row among its
// gate's earlier rows in the run (warp votes, no atomics), a thread per
// gate turns the per-warp counts into per-warp offsets, the block scans the
// gates (totals and tile descriptors), and every row goes to its offset plus
// its rank: a stable counting sort. (The two-kernel path ran 2 blocks a
// kernel here, 42 us at 4097 rows and 1365 gates on the H200; a block radix
// sort in one block still took 28 us; this kernel took 25.8 us and then
// 18.7 us, see docs/kernel-design.md.) Past 2048 gates it stands in for
// the CUB path's five launches and more (41 us at 4097 rows and as many
// gates); with half the warps where 16 warps' counts would not fit
// in shared memory.
constexpr int64_t kSmallPlanRows = 8192;
constexpr int64_t kSmallPlanGates = 8192;
// Dynamic shared memory the plan may take: sm_90's 227 KiB a block, less 1 KiB
// for the scan's static storage (512 bytes at 16 warps).
constexpr int kSmallPlanSmemBudget = 226 * 1024;
// Dynamic shared memory: where each gate starts, the per-warp counts (16-bit:
// a warp has at most 1024 rows, the block 8192), a 16-bit gate id per row, and
// the sorted order (16-bit row ids) before it is written out: 36 bytes a gate
// and 4 a row at 16 warps, 20 and 4 at 8.
__host__ __device__ constexpr int64_t small_plan_smem_at(int warps, int64_t rows, int64_t gates) {
  return gates * 4 + warps * gates * 2 + rows * 4;
}
// 16 warps wherever their counts fit (up to 5973 gates at 4097 rows, 5518 at
// 8192), else 8 (at most 192 KiB, at 8192 rows and gates). The 16-warp plan
// past 4096 gates (docs/kernel-design.md, "More gates"): at 4097 rows and as many gates
// the 8-warp plan took 27 us alone; 16 warps took 23.7 there,
// where forward+backward was 3.9-5.3 us faster than with 8 warps (4097 rows,
// 4097-5973 gates) and 8.6-10.3 us faster than the CUB path at 8192 rows with
// 5000 and 5518 gates (bf16 x 3072).
__host__ __device__ constexpr int small_plan_warps(int64_t rows, int64_t gates) {
  return small_plan_smem_at(16, rows, gates) <= kSmallPlanSmemBudget ? 16 : 8;
}
__host__ __device__ constexpr int64_t small_plan_smem(int64_t rows, int64_t gates) {
  return small_plan_smem_at(small_plan_warps(rows, gates), rows, gates);
}
static_assert(small_plan_smem_at(8, kSmallPlanRows, kSmallPlanGates) <= kSmallPlanSmemBudget, "8 warps always fit");
static_assert(small_plan_warps(kSmallPlanRows, 4096) == 16, "16 warps up to 4096 gates at any rows");
static_assert(small_plan_warps(4097, 5973) == 16 && small_plan_warps(4097, 5974) == 8 &&
                  small_plan_warps(8192, 5518) == 16 && small_plan_warps(8192, 5519) == 8,
              "the limits the comment above and CudaVsHost.OneBlockPlanTakesUpTo8192Gates name");
// The automatic choice takes the 8-warp plan only up to this many rows. H200,
// bf16 x 3072, forward+backward: with 4097 rows and gates it beat the
// CUB path by 12-15 us, with 8192 it lost by 4-6 (its plan alone 47 us: 32
// steps of votes a warp); with 16 warps it won at 8192 rows and 3000 or 4096
// gates by 13-18 us.
constexpr int64_t kSmallPlanNarrowAutoRows = 6144;

// The lanes whose key equals this lane's (as __match_any_sync), for keys
// below 2^bits, from one warp vote a bit. In plan_small the hardware match
// takes a third of the kernel's time (9 matches a warp, 16 warps waiting on
// them on one SM).
__device__ __forceinline__ unsigned match_by_ballots(unsigned key, int bits) {
  unsigned peers = 0xffffffffu;
  for (int b = 0; b < bits; ++b) {
    const bool one = (key >> b) & 1u;
    const unsigned m = __ballot_sync(0xffffffffu, one);
    peers &= one ? m : ~m;
  }
  return peers;
}

template <int Warps>
__global__ void __launch_bounds__(Warps * 32, 1) plan_small_kernel(
    const int64_t* index, int64_t rows, int64_t gates, PlanCount* plan, TileDesc* tiles, FoldDesc* folds,
    int64_t* order, unsigned long long* status, unsigned long long epoch) {
  constexpr int kThreads = Warps * 32;
  constexpr int kSteps = int(kSmallPlanRows / kThreads);  // 32-row steps of a warp, at most
  extern __shared__ __align__(16) unsigned char small_smem[];
  __shared__ typename PlanScan<kThreads>::TempStorage scan_tmp;
  let_next_kernel_start();
  const int tid = int(threadIdx.x), lane = tid & 31, warp = tid >> 5, G = int(gates), R = int(rows);
  int* start = reinterpret_cast<int*>(small_smem);                          // [gates]
  unsigned short* wcount = reinterpret_cast<unsigned short*>(start + G);     // [warps][gates]
  unsigned short* gid = wcount + Warps * G;                                  // [rows]
  unsigned short* placed = gid + R;                                          // [rows]
  unsigned short* mine = wcount + warp * G;
  for (int i = tid; i < Warps * G; i += kThreads) wcount[i] = 0;
  const int seg = (R + kThreads - 1) / kThreads * 32;  // this warp's rows: [r0, r0 + seg)
  const int r0 = warp * seg;
  int64_t v[kSteps];
#pragma unroll
  for (int i = 0; i < kSteps; ++i) {  // every load first
    const int r = r0 + i * 32 + lane;
    v[i] = i * 32 < seg && r < R ? index[r] : -1;
  }
  __syncthreads();  // wcount is zero
  bool bad = false;
  const unsigned below = (1u << lane) - 1u;
  const int key_bits = 32 - __clz(G);  // gate ids and G itself
  // Each row's rank among its gate's rows earlier in this warp's run, kept
  // for the placement below: one warp match a row (a second round of
  // matches in the placement takes about a quarter of this kernel's time).
  int rank[kSteps];
#pragma unroll
  for (int i = 0; i < kSteps; ++i) {
    rank[i] = 0;
    if (i * 32 >= seg) continue;
    const int r = r0 + i * 32 + lane;
    const bool in = r < R, ok = in && v[i] >= 0 && v[i] < G;
    if (in && !ok) {
      bad = true;
      record_bad(status, epoch, r);
    }
    if (in) gid[r] = ok ? (unsigned short)v[i] : (unsigned short)0xffff;
    const unsigned peers = match_by_ballots(ok ? unsigned(v[i]) : unsigned(G), key_bits);  // G: no gate
    const int before = ok ? mine[v[i]] : 0;  // read by every peer before the update
    __syncwarp();
    if (ok && (peers & below) == 0) mine[v[i]] = (unsigned short)(before + __popc(peers));
    __syncwarp();
    rank[i] = before + __popc(peers & below);
  }
  if (__syncthreads_or(bad)) return;  // the status names the row; nothing is planned
  // Per gate (a thread each, in rounds): per-warp counts become offsets; the
  // gate's tiles, slots and rows are scanned over the block.
  const PlanCount total = scan_gates<kThreads>(
      gates, scan_tmp,
      [&](int64_t k) {
        unsigned short c[Warps];
#pragma unroll
        for (int w = 0; w < Warps; ++w) c[w] = wcount[w * G + int(k)];  // loads first
        int run = 0;
#pragma unroll
        for (int w = 0; w < Warps; ++w) {
          wcount[w * G + int(k)] = (unsigned short)run;
          run += c[w];
        }
        return (long long)run;
      },
      [&](int64_t k, const PlanCount& at, long long n) {
        start[k] = int(at.rows);
        write_tiles(k, at, n, tiles, folds);
      });
  if (tid == 0) plan[G] = total;
  __syncthreads();
  // Place this warp's rows, in row order: a gate's rows of earlier warps
  // (mine[k] is now this warp's offset), then of this warp's earlier rows.
  // They are placed in shared memory, then written out in order: scattered
  // 8-byte stores from one SM cost about as much as the descriptors' did.
#pragma unroll
  for (int i = 0; i < kSteps; ++i) {
    const int r = r0 + i * 32 + lane;
    if (i * 32 >= seg || r >= R) continue;
    const unsigned k = gid[r];
    placed[start[k] + mine[k] + rank[i]] = (unsigned short)r;
  }
  __syncthreads();
  for (int i = tid; i < R; i += kThreads) order[i] = placed[i];
}

}  // namespace cuda_detail
}  // namespace gatecheck
