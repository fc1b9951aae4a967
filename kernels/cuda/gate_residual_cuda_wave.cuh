// The reproducible mode's tile work as one balanced wave, and its fold.
//
// Binned states combine exactly in any split, so a block's rows need not be
// one 256-row tile of one gate. The grid holds about the resident blocks a
// column chunk, and block b takes an equal share [lo, hi) of the gate-sorted
// row order (the plan's), crossing gate boundaries: no last wave runs part
// full, and a gate of several blocks leaves a state per block rather than
// per tile. A block keeps one binned sum a column for the run of one gate it
// is in. When the gate changes it writes the run's outputs itself if the run
// is the whole gate, else the run's state at slot (b + gate) for
// wave_fold_kernel. It also writes the zero outputs of any gate with no rows
// that lies between its runs, or between its first run and the row before
// its share (and, for the last share, after its last run). A row's gate is
// index[order[position]]: no list beyond the plan's order.
//
// Slots: block b's runs are of gates [gate(lo), gate(hi - 1)], and gate(lo)
// of block b + 1 is at least gate(hi - 1) of block b, so b + gate names each
// (block, gate) pair once; blocks + gates slots a column in all.
#pragma once

#include <cstdint>

#include "gate_residual_cuda_pipe.cuh"

namespace gatecheck {
namespace cuda_detail {

// The wave's extent: `blocks` shares of the call's `rows` (each at least one
// row and at most BinnedFp64Sum::kMaxTerms, so a run's digits stay exact).
// Rows and gates below 2^31: the kernel keeps row ids and gates in 32 bits.
struct WaveArgs {
  const int64_t* index;
  const int64_t* order;
  int64_t rows, gates, blocks;

  __device__ __forceinline__ int64_t lo(int64_t b) const { return b * rows / blocks; }
  // The gate of the row at position p of the gate-sorted order (the index
  // was checked by the plan before any block reads it).
  __device__ __forceinline__ int64_t gate_at(int64_t p) const { return __ldg(index + __ldg(order + p)); }
};

// A column's zero outputs for gates (from, to): gates with no rows.
template <class T>
__device__ __forceinline__ void store_unused_gates(const BwdArgs<T>& a, int64_t from, int64_t to, int64_t col) {
  const uint64_t zero[kBinnedWords] = {0, 0, 0, 0};
  for (int64_t k = from + 1; k < to; ++k) store_gate_outputs(a.binned_state, a.grad_gate, k * a.dim + col, zero);
}

// Block (b, column chunk) of the wave: the copy pipeline of bwd_pipe_binned_kernel
// (one column a thread, 16-bit types at 512-byte segments), over this block's
// share of the order. A stage's row ids are loaded an iteration before its
// copies are issued, and its gates are loaded then and published an
// iteration after (Depth >= 3 leaves a barrier between that and their use).
template <class T, int RowBytes, int Depth>
__global__ void __launch_bounds__(kPipeThreads, Depth == 3 ? 4 : 3) bwd_pipe_binned_wave_kernel(BwdArgs<T> a, WaveArgs w) {
  static_assert(Depth >= 3, "a stage's gates are published an iteration after its copies are issued");
  constexpr int N = 16 / int(sizeof(T));
  constexpr int CW = RowBytes / int(sizeof(T));
  constexpr int kCopies = RowBytes / 16;
  constexpr int kGroups = kPipeThreads / kCopies;
  constexpr int kRows = kPipeStageRows / kGroups;  // rows a thread copies a stage
  static_assert(CW == kPipeThreads && kPipeThreads % kCopies == 0 && kPipeStageRows % kGroups == 0,
                "one column a thread, whole rows copied a round");
  extern __shared__ __align__(16) unsigned char pipe_smem[];
  __shared__ int stage_row[Depth][kPipeStageRows];
  __shared__ int stage_gate[Depth][kPipeStageRows];
  __shared__ int gate_before, gate_after;  // of the rows just before and after this share (-1, gates past the ends)
  wait_for_previous_kernel();
  let_next_kernel_start();
  if (call_failed(a.status, a.epoch)) return;  // the same for every thread of the block
  const int64_t b = blockIdx.x;
  const int64_t lo = w.lo(b), hi = w.lo(b + 1);
  const int n = int(hi - lo);
  if (n <= 0) return;
  if (threadIdx.x == 0) {
    gate_before = lo > 0 ? int(w.gate_at(lo - 1)) : -1;
    gate_after = hi < w.rows ? int(w.gate_at(hi)) : int(w.gates);
  }
  __syncthreads();
  const bool last_share = hi == w.rows;
  const int64_t* share_order = w.order + lo;
  const int part = int(threadIdx.x) % kCopies, group = int(threadIdx.x) / kCopies;
  T* gs = reinterpret_cast<T*>(pipe_smem);  // [Depth][kPipeStageRows][CW]
  T* ys = gs + Depth * kPipeStageRows * CW;
  const int stages = (n + kPipeStageRows - 1) / kPipeStageRows;
  const bool outputs = a.grad_y != nullptr;  // else a partial: the state only, the gate not read

  for (int64_t c0 = int64_t(blockIdx.y) * CW; c0 < a.dim; c0 += int64_t(gridDim.y) * CW) {
    const int64_t c = c0 + part * N;  // this thread's 16 bytes while copying
    const bool col_ok = c < a.dim;
    auto load_rows = [&](int s, int (&rid)[kRows]) {
#pragma unroll
      for (int j = 0; j < kRows; ++j) {
        const int i = s * kPipeStageRows + group + j * kGroups;
        rid[j] = i < n ? int(__ldg(share_order + i)) : -1;
      }
    };
    auto gates_of = [&](const int (&rid)[kRows], int (&gid)[kRows]) {
#pragma unroll
      for (int j = 0; j < kRows; ++j) gid[j] = rid[j] >= 0 ? int(__ldg(w.index + rid[j])) : -1;
    };
    auto issue = [&](int s, const int (&rid)[kRows]) {
      const int buf = s % Depth;
#pragma unroll
      for (int j = 0; j < kRows; ++j) {
        const int r = group + j * kGroups;
        if (part == 0) stage_row[buf][r] = rid[j];
        if (rid[j] < 0 || !col_ok) continue;
        const int64_t o = int64_t(rid[j]) * a.dim + c;
        const int so = (buf * kPipeStageRows + r) * CW + part * N;
        copy16_async(gs + so, a.grad_out + o);
        copy16_async(ys + so, a.y + o);
      }
      commit_copies();  // empty groups past the end keep every thread's count alike
    };
    auto publish_gates = [&](int s, const int (&gid)[kRows]) {
      if (part != 0) return;
#pragma unroll
      for (int j = 0; j < kRows; ++j) stage_gate[s % Depth][group + j * kGroups] = gid[j];
    };

    int rid[kRows], gid[kRows];
#pragma unroll
    for (int s = 0; s < Depth - 1; ++s) {
      load_rows(s, rid);
      gates_of(rid, gid);
      issue(s, rid);
      publish_gates(s, gid);
    }
    load_rows(Depth - 1, rid);

    // The sums: column c0 + threadIdx.x, the run of gate `run` (none yet: -1).
    const int64_t col = c0 + int64_t(threadIdx.x);
    const bool sums = col < a.dim;
    BinnedFp64Sum sum;
    sum.clear();
    int run = -1;
    bool run_at_lo = true;  // the run began at lo (it may have begun before this share)
    auto finish_run = [&](bool at_hi) {  // the run's outputs, or its state for the fold
      uint64_t v[kBinnedWords];
      sum.to_words(v);
      const bool whole = (!run_at_lo || gate_before != run) && (!at_hi || gate_after != run);
      if (whole) store_gate_outputs(a.binned_state, a.grad_gate, int64_t(run) * a.dim + col, v);
      else binned_cuda::store_state(a.tile_states + ((b + run) * a.dim + col) * kBinnedWords, v);
    };
    auto start_run = [&](int k) {
      if (run >= 0) finish_run(false);
      store_unused_gates(a, run >= 0 ? run : gate_before, k, col);
      run_at_lo = run < 0;
      run = k;
      sum.clear();
    };

    Pack<T, N> gk;
    int gk_gate = -1;  // the gate whose row gk holds
    for (int s = 0; s < stages; ++s) {
      wait_copies<Depth - 2>();  // this thread's copies of stage s have landed
      __syncthreads();
      const int next = s + Depth - 1;  // into the buffer of stage s - 1, which every thread is done with
      if (next < stages) issue(next, rid);
      else commit_copies();
      if (s >= 1 && next - 1 < stages) publish_gates(next - 1, gid);  // read at iteration next - 1 > s
      gates_of(rid, gid);                                             // stage next's, in flight
      load_rows(next + 1, rid);                                       // stage next + 1's, in flight
      const int buf = s % Depth;
      if (outputs && col_ok) {  // grad_res and grad_y of the rows this thread copied
#pragma unroll
        for (int j = 0; j < kRows; ++j) {
          const int r = group + j * kGroups;
          if (s * kPipeStageRows + r >= n) break;
          const int row = stage_row[buf][r], k = stage_gate[buf][r];
          if (k != gk_gate) {
            gk = load_pack<T, N>(a.gate + int64_t(k) * a.gate_stride + c);
            gk_gate = k;
          }
          const int so = (buf * kPipeStageRows + r) * CW + part * N;
          const uint4 raw = *reinterpret_cast<const uint4*>(gs + so);
          Pack<T, N> gv, gy;
          memcpy(&gv, &raw, sizeof gv);
#pragma unroll
          for (int e = 0; e < N; ++e) gy.e[e] = gate_residual_grad_y(gv.e[e], gk.e[e]);
          const int64_t o = int64_t(row) * a.dim + c;
          if (a.grad_res) store_pack<T, N>(a.grad_res + o, gv);
          store_pack<T, N>(a.grad_y + o, gy);
        }
      }
      if (sums) {
        const int here = min(kPipeStageRows, n - s * kPipeStageRows);
        const T* gcol = gs + buf * kPipeStageRows * CW + threadIdx.x;
        const T* ycol = ys + buf * kPipeStageRows * CW + threadIdx.x;
        if (stage_gate[buf][0] == run && stage_gate[buf][here - 1] == run) {  // gates are sorted: one run
#pragma unroll 4
          for (int r = 0; r < here; ++r) sum.add(gate_residual_grad_gate_term(gcol[r * CW], ycol[r * CW]));
        } else {
          for (int r = 0; r < here; ++r) {
            const int k = stage_gate[buf][r];
            if (k != run) start_run(k);
            sum.add(gate_residual_grad_gate_term(gcol[r * CW], ycol[r * CW]));
          }
        }
      }
    }
    wait_copies<0>();  // only empty groups remain
    if (sums) {
      finish_run(true);
      if (last_share) store_unused_gates(a, run, w.gates, col);
    }
    __syncthreads();  // every thread is done with shared memory before the next column chunk
  }
}

// What wave_fold_kernel reads: the plan's failure report (FoldPlan), the wave,
// its run states and where the gates' outputs go.
template <class T>
struct WaveFoldArgs : FoldPlan {
  WaveArgs wave;
  const uint64_t* run_states;  // [blocks + gates, dim, kBinnedWords], by slot b + gate
  uint64_t* state;             // [gates, dim, kBinnedWords], or null
  T* grad_gate;                // or null
};

// Block (b, column chunk): the gate of share b's last row, if its rows start
// in share b and go on past it, folded from its states at slots b + gate of
// shares b, b + 1, ... (each of those shares but the last is that gate's
// alone; shares past b that begin with the gate are counted by the block at
// once). The last kernel of the wave's backward: block (0, 0) reports a
// failed call.
template <class T>
__global__ void __launch_bounds__(256) wave_fold_kernel(WaveFoldArgs<T> f) {
  __shared__ int64_t gate;
  __shared__ bool mine;
  wait_for_previous_kernel();
  if (last_kernel_found_failure(f, cuda_status::kReportedByBackward)) return;
  const WaveArgs& w = f.wave;
  const int64_t b = blockIdx.x, lo = w.lo(b), hi = w.lo(b + 1);
  if (threadIdx.x == 0) {
    gate = hi > lo ? w.gate_at(hi - 1) : -1;
    mine = gate >= 0 && hi < w.rows && w.gate_at(hi) == gate && (lo == 0 || w.gate_at(lo - 1) != gate);
  }
  __syncthreads();
  if (!mine) return;
  // Shares b + 1, b + 2, ... that begin with the gate: a prefix (gates are sorted).
  int64_t shares = 1;
  for (int64_t i0 = 1;; i0 += blockDim.x) {
    const int64_t i = i0 + int64_t(threadIdx.x);
    const bool on = b + i < w.blocks && w.gate_at(w.lo(b + i)) == gate;
    const int count = __syncthreads_count(on);
    shares += count;
    if (count < int(blockDim.x)) break;
  }
  const int64_t step = int64_t(gridDim.y) * blockDim.x;
  for (int64_t c = int64_t(blockIdx.y) * blockDim.x + threadIdx.x; c < f.dim; c += step) {
    BinnedSum s;
    s.clear();
    binned_cuda::merge_states<true>(s, f.run_states + ((b + gate) * f.dim + c) * kBinnedWords, f.dim * kBinnedWords,
                                    int32_t(shares));
    uint64_t v[kBinnedWords];
    s.to_words(v);
    store_gate_outputs(f.state, f.grad_gate, gate * f.dim + c, v);
  }
}

}  // namespace cuda_detail
}  // namespace gatecheck
