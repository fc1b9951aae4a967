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
// gates of several tiles use them) and how many such multi-tile gates precede.
struct PlanCount {
  long long tiles, slots, multi;
};
struct PlanCountSum {
  __host__ __device__ PlanCount operator()(const PlanCount& a, const PlanCount& b) const {
    return PlanCount{a.tiles + b.tiles, a.slots + b.slots, a.multi + b.multi};
  }
};
// Gate k's counts from its segment [begin, end); k == gates gives zeros, so the
// exclusive scan's last entry holds the totals.
struct PlanCountOf {
  const int64_t* seg_begin;
  const int64_t* seg_end;
  int64_t gates;
  __host__ __device__ PlanCount operator()(int64_t k) const {
    if (k >= gates) return PlanCount{0, 0, 0};
    const int64_t n = seg_end[k] - seg_begin[k];
    const long long t = n <= kGradGateTileRows ? 1 : (n + kGradGateTileRows - 1) / kGradGateTileRows;
    return t > 1 ? PlanCount{t, t, 1} : PlanCount{1, 0, 0};
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

// Backward prologue: the index check, the row ids to sort, and empty segments.
__global__ void bwd_prepare_kernel(const int64_t* index, int64_t rows, int64_t gates,
                                   unsigned long long* status, unsigned long long epoch,
                                   int64_t* row_ids, int64_t* seg_begin, int64_t* seg_end) {
  const int64_t n = rows > gates ? rows : gates;
  for (int64_t i = global_thread(); i < n; i += global_threads()) {
    if (i < rows) {
      record_bad_row(index, i, gates, status, epoch);
      row_ids[i] = i;
    }
    if (i < gates) seg_begin[i] = seg_end[i] = 0;
  }
}

// Segment bounds of each gate in the stably sorted keys.
__global__ void segments_kernel(const unsigned long long* keys, int64_t rows, int64_t gates,
                                int64_t* seg_begin, int64_t* seg_end,
                                const unsigned long long* status, unsigned long long epoch) {
  wait_for_previous_kernel();
  if (call_failed(status, epoch)) return;
  for (int64_t i = global_thread(); i < rows; i += global_threads()) {
    const unsigned long long k = keys[i];
    if (k >= (unsigned long long)gates) continue;  // unreachable once the check passed
    if (i == 0 || keys[i - 1] != k) seg_begin[k] = i;
    if (i == rows - 1 || keys[i + 1] != k) seg_end[k] = i + 1;
  }
}

// One thread per gate writes its tile descriptors (tiles of kGradGateTileRows
// rows, counted within the gate's own rows in row order).
__global__ void fill_tiles_kernel(const int64_t* seg_begin, const int64_t* seg_end,
                                  const PlanCount* plan, int64_t gates, TileDesc* tiles,
                                  int64_t* multi_gates, const unsigned long long* status,
                                  unsigned long long epoch) {
  wait_for_previous_kernel();
  let_next_kernel_start();
  if (call_failed(status, epoch)) return;
  for (int64_t k = global_thread(); k < gates; k += global_threads()) {
    const int64_t b = seg_begin[k], e = seg_end[k];
    const PlanCount at = plan[k];
    const int64_t nt = plan[k + 1].tiles - at.tiles;
    for (int64_t t = 0; t < nt; ++t) {
      const int64_t tb = b + t * kGradGateTileRows;
      const int64_t te = tb + kGradGateTileRows < e ? tb + kGradGateTileRows : e;
      tiles[at.tiles + t] = TileDesc{k, tb, te, nt > 1 ? at.slots + t : -1};
    }
    if (nt > 1) multi_gates[at.multi] = k;
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
  const unsigned long long* status;
  unsigned long long epoch;
};

// out = res + gate[index] * y. Block: R rows x (blockDim.x * N) columns.
// res and y are loaded before waiting for the index check (they are in bounds
// whatever the index holds); gate rows are read only once the check passed.
template <class T, int N, int R>
__global__ void __launch_bounds__(256) fwd_kernel(FwdArgs<T> a) {
  const int64_t r0 = int64_t(blockIdx.x) * R;
  const int64_t step = int64_t(gridDim.y) * blockDim.x * N;
  int64_t c = (int64_t(blockIdx.y) * blockDim.x + threadIdx.x) * N;
  Pack<T, N> rv[R], yv[R], gv[R];
  auto load_inputs = [&](int64_t col) {
#pragma unroll
    for (int u = 0; u < R; ++u) {
      if (r0 + u >= a.rows) continue;
      const int64_t o = (r0 + u) * a.dim + col;
      rv[u] = load_pack<T, N>(a.res + o);
      yv[u] = load_pack<T, N>(a.y + o);
    }
  };
  if (c < a.dim) load_inputs(c);
  wait_for_previous_kernel();
  if (call_failed(a.status, a.epoch)) return;
  int64_t gi[R];
#pragma unroll
  for (int u = 0; u < R; ++u) gi[u] = r0 + u < a.rows ? a.index[r0 + u] : 0;
  while (c < a.dim) {
#pragma unroll
    for (int u = 0; u < R; ++u)
      if (r0 + u < a.rows) gv[u] = load_pack<T, N>(a.gate + gi[u] * a.dim + c);
#pragma unroll
    for (int u = 0; u < R; ++u) {
      if (r0 + u >= a.rows) continue;
      Pack<T, N> ov;
#pragma unroll
      for (int j = 0; j < N; ++j) ov.e[j] = gate_residual_out(rv[u].e[j], gv[u].e[j], yv[u].e[j]);
      store_pack<T, N>(a.out + (r0 + u) * a.dim + c, ov);
    }
    c += step;
    if (c < a.dim) load_inputs(c);
  }
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
    const Pack<T, N> gk = load_pack<T, N>(a.gate + d.gate * a.dim + c);
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
