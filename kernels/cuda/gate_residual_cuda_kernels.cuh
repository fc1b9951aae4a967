// The __global__ kernels of gate_residual. The per-element math comes from
// gate_residual_math.h only. Launch shapes are chosen in gate_residual_cuda.cu.
//
// Every compute kernel first reads the call's index status word and returns
// without writing anything if the index check of this call failed, so an
// out-of-range index never turns into an out-of-bounds access.
#pragma once

#include <cstdint>

#include "../gate_residual_math.h"
#include "gate_residual_cuda_pack.cuh"
#include "gate_residual_cuda_status.h"

namespace gatecheck {
namespace cuda_detail {

// One tile of grad_gate work: rows [begin, end) of the gate-sorted row order,
// all of gate `gate`. slot < 0: the gate's only tile, which writes grad_gate
// itself; otherwise the fp32 partial goes to partials[slot], folded later.
struct TileDesc {
  int64_t gate, begin, end, slot;
};

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
// Gate k's counts; k == gates gives zeros, so an exclusive scan over gates + 1
// entries ends with the totals.
struct PlanCountOf {
  const unsigned long long* counts;
  int64_t gates;
  __host__ __device__ PlanCount operator()(int64_t k) const {
    return k >= gates ? PlanCount{0, 0, 0, 0} : plan_count((long long)counts[k]);
  }
};

// Programmatic dependent launch (sm_90): a kernel launched with the
// programmatic-serialization attribute may start while the previous kernel in
// the stream still runs; it must wait here before touching anything that
// kernel writes. Without the attribute both are no-ops.
__device__ __forceinline__ void wait_for_previous_kernel() {
  asm volatile("griddepcontrol.wait;" ::: "memory");
}
__device__ __forceinline__ void let_next_kernel_start() {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

__device__ __forceinline__ bool call_failed(const unsigned long long* status,
                                            unsigned long long epoch) {
  return cuda_status::is_bad(*status, epoch);
}

__device__ __forceinline__ int64_t global_thread() {
  return int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t global_threads() { return int64_t(gridDim.x) * blockDim.x; }

__device__ __forceinline__ void record_bad_row(const int64_t* index, int64_t r, int64_t gates,
                                               unsigned long long* status,
                                               unsigned long long epoch) {
  const int64_t v = index[r];
  if (v < 0 || v >= gates) atomicMax(status, cuda_status::encode(epoch, r));
}

// Forward prologue: the index range check (integer atomicMax only).
__global__ void check_index_kernel(const int64_t* index, int64_t rows, int64_t gates,
                                   unsigned long long* status, unsigned long long epoch) {
  let_next_kernel_start();  // the forward may load res and y meanwhile
  for (int64_t r = global_thread(); r < rows; r += global_threads())
    record_bad_row(index, r, gates, status, epoch);
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
      if (!ok) atomicMax(status, cuda_status::encode(epoch, i));
    }
    const unsigned peers = __match_any_sync(0xffffffffu, ok ? (unsigned long long)v : ~0ull);
    if (ok && lane == __ffs(peers) - 1) atomicAdd(&counts[v], (unsigned long long)__popc(peers));
  }
}

// Writes gate k's tile descriptors (tiles of kGradGateTileRows rows, counted
// within the gate's own rows in row order) from its scanned counts.
__device__ __forceinline__ void write_tiles(int64_t k, const PlanCount& at, long long n, TileDesc* tiles,
                                            int64_t* multi_gates) {
  const PlanCount own = plan_count(n);
  for (int64_t t = 0; t < own.tiles; ++t) {
    const int64_t tb = at.rows + t * kGradGateTileRows;
    const int64_t te = tb + kGradGateTileRows < at.rows + n ? tb + kGradGateTileRows : at.rows + n;
    tiles[at.tiles + t] = TileDesc{k, tb, te, own.tiles > 1 ? at.slots + t : -1};
  }
  if (own.tiles > 1) multi_gates[at.multi] = k;
}

// The plan for up to kPlanBlockGates gates in one block: scan the counts,
// write the tile descriptors, zero the counts for the next call. (One launch
// instead of a device-wide scan's two plus a fill kernel; measured on the
// H200 it wins for few gates and loses badly at 10922, see bench/NOTES.md.)
constexpr int kPlanThreads = 1024;
constexpr int kPlanItems = 8;  // gates per thread per round
constexpr int64_t kPlanBlockGates = 2048;

template <class BlockScan>
__global__ void __launch_bounds__(kPlanThreads) plan_block_kernel(
    unsigned long long* counts, int64_t gates, PlanCount* plan, TileDesc* tiles, int64_t* multi_gates,
    const unsigned long long* status, unsigned long long epoch) {
  __shared__ typename BlockScan::TempStorage scan_tmp;
  wait_for_previous_kernel();
  let_next_kernel_start();
  const bool failed = call_failed(status, epoch);
  PlanCount carry{0, 0, 0, 0};
  for (int64_t base = 0; base < gates; base += int64_t(kPlanThreads) * kPlanItems) {
    const int64_t k0 = base + int64_t(threadIdx.x) * kPlanItems;
    long long n[kPlanItems];
    PlanCount local{0, 0, 0, 0};
#pragma unroll
    for (int j = 0; j < kPlanItems; ++j) {
      n[j] = k0 + j < gates ? (long long)counts[k0 + j] : 0;
      if (k0 + j < gates) local = PlanCountSum{}(local, plan_count(n[j]));
    }
    PlanCount at, total;
    BlockScan(scan_tmp).ExclusiveScan(local, at, PlanCount{0, 0, 0, 0}, PlanCountSum{}, total);
    at = PlanCountSum{}(at, carry);
#pragma unroll
    for (int j = 0; j < kPlanItems; ++j) {
      const int64_t k = k0 + j;
      if (k >= gates) break;
      plan[k] = at;
      if (!failed) write_tiles(k, at, n[j], tiles, multi_gates);
      counts[k] = 0;
      at = PlanCountSum{}(at, plan_count(n[j]));
    }
    carry = PlanCountSum{}(carry, total);
    __syncthreads();  // scan_tmp is reused by the next round
  }
  if (threadIdx.x == 0) plan[gates] = carry;
}

// The same for more gates, after a device-wide scan: one thread per gate.
__global__ void fill_tiles_kernel(unsigned long long* counts, const PlanCount* plan, int64_t gates,
                                  TileDesc* tiles, int64_t* multi_gates, const unsigned long long* status,
                                  unsigned long long epoch) {
  wait_for_previous_kernel();
  let_next_kernel_start();
  const bool failed = call_failed(status, epoch);
  for (int64_t k = global_thread(); k < gates; k += global_threads()) {
    if (!failed) write_tiles(k, plan[k], (long long)counts[k], tiles, multi_gates);
    counts[k] = 0;
  }
}

template <class T>
struct FwdArgs {
  const T* res;
  const T* gate;
  const int64_t* index;
  const T* y;
  T* out;
  int64_t rows, dim;
  int64_t gate_stride;  // elements between gate rows (>= dim: a strided view)
  const unsigned long long* status;
  unsigned long long epoch;
};

// out = res + gate[index] * y. Block: R rows x (blockDim.x * N) columns.
// res and y are loaded before waiting for the index check (they are in bounds
// whatever the index holds); gate rows are read only once the check passed.
// (A loop-carried prefetch of the next columns doubled the registers of the
// bf16 kernel and cost 35% of its speed on the H200: see bench/NOTES.md.)
template <class T, int N, int R>
__global__ void __launch_bounds__(256) fwd_kernel(FwdArgs<T> a) {
  const int64_t r0 = int64_t(blockIdx.x) * R;
  const int64_t step = int64_t(gridDim.y) * blockDim.x * N;
  for (int64_t c = (int64_t(blockIdx.y) * blockDim.x + threadIdx.x) * N; c < a.dim; c += step) {
    Pack<T, N> rv[R], yv[R], gv[R];
#pragma unroll
    for (int u = 0; u < R; ++u) {
      if (r0 + u >= a.rows) continue;
      const int64_t o = (r0 + u) * a.dim + c;
      rv[u] = load_pack<T, N>(a.res + o);
      yv[u] = load_pack<T, N>(a.y + o);
    }
    wait_for_previous_kernel();  // returns at once after the first time
    if (call_failed(a.status, a.epoch)) return;
#pragma unroll
    for (int u = 0; u < R; ++u)
      if (r0 + u < a.rows) gv[u] = load_pack<T, N>(a.gate + a.index[r0 + u] * a.gate_stride + c);
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
  T* grad_res;
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
};

// One block per (tile, column chunk). Each thread owns N columns and walks the
// tile's rows in order: writes grad_res and grad_y of each row, and sums g*y
// in fp32 from +0, one row after the other (the host twin's order).
template <class T, int N, int U>
__global__ void __launch_bounds__(256) bwd_tile_kernel(BwdArgs<T> a) {
  __shared__ int64_t tile_rows[kGradGateTileRows];
  wait_for_previous_kernel();
  let_next_kernel_start();
  if (call_failed(a.status, a.epoch)) return;
  if (int64_t(blockIdx.x) >= a.totals->tiles) return;
  const TileDesc d = a.tiles[blockIdx.x];
  const int n = int(d.end - d.begin);
  for (int i = threadIdx.x; i < n; i += blockDim.x) tile_rows[i] = a.order[d.begin + i];
  __syncthreads();
  const int64_t step = int64_t(gridDim.y) * blockDim.x * N;
  for (int64_t c = (int64_t(blockIdx.y) * blockDim.x + threadIdx.x) * N; c < a.dim; c += step) {
    const Pack<T, N> gk = load_pack<T, N>(a.gate + d.gate * a.gate_stride + c);
    float acc[N];
#pragma unroll
    for (int j = 0; j < N; ++j) acc[j] = 0.0f;
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
        const int64_t o = tile_rows[i + u] * a.dim + c;
        Pack<T, N> gy;
#pragma unroll
        for (int j = 0; j < N; ++j) {
          acc[j] = gate_residual_accumulate(acc[j], gate_residual_grad_gate_term(gv[u].e[j], yv[u].e[j]));
          gy.e[j] = gate_residual_grad_y(gv[u].e[j], gk.e[j]);
        }
        store_pack<T, N>(a.grad_res + o, gv[u]);
        store_pack<T, N>(a.grad_y + o, gy);
      }
    }
    if (d.slot < 0) {
      Pack<T, N> gg;
#pragma unroll
      for (int j = 0; j < N; ++j)
        gg.e[j] = gate_residual_grad_gate_finish<T>(gate_residual_accumulate(0.0f, acc[j]));
      store_pack<T, N>(a.grad_gate + d.gate * a.dim + c, gg);
    } else {
      float* p = a.partials + d.slot * a.dim + c;
#pragma unroll
      for (int j = 0; j < N; ++j) p[j] = acc[j];
    }
  }
}

template <class T>
struct FoldArgs {
  const int64_t* multi_gates;
  const PlanCount* plan;  // [gates + 1], exclusive scan
  int64_t gates;
  const float* partials;
  T* grad_gate;
  int64_t dim;
  const unsigned long long* status;
  unsigned long long epoch;
};

// Gates of several tiles: fold the tile partials in tile order from +0, round once.
template <class T>
__global__ void __launch_bounds__(256) fold_kernel(FoldArgs<T> a) {
  wait_for_previous_kernel();
  if (call_failed(a.status, a.epoch)) return;
  if (int64_t(blockIdx.x) >= a.plan[a.gates].multi) return;
  const int64_t k = a.multi_gates[blockIdx.x];
  const int64_t slot0 = a.plan[k].slots;
  const int64_t nt = a.plan[k + 1].tiles - a.plan[k].tiles;
  const int64_t step = int64_t(gridDim.y) * blockDim.x;
  for (int64_t c = int64_t(blockIdx.y) * blockDim.x + threadIdx.x; c < a.dim; c += step) {
    const float* p = a.partials + slot0 * a.dim + c;
    float total = 0.0f;
#pragma unroll 8
    for (int64_t t = 0; t < nt; ++t) total = gate_residual_accumulate(total, p[t * a.dim]);
    a.grad_gate[k * a.dim + c] = gate_residual_grad_gate_finish<T>(total);
  }
}

}  // namespace cuda_detail
}  // namespace gatecheck
