// The CUDA kernels of gate_residual (implementation name "cuda"): public API.
// Pointers are device pointers; work is queued on p.stream (a cudaStream_t,
// NULL = the legacy default stream). Nothing here synchronises the host except
// gate_residual_cuda_sync_status() and the plugin entry points built on it.
//
// Index contents are validated on the device: a call with an index outside
// [0, gates) returns success at launch, writes no output at all, and leaves a
// status word on the device that names the first bad row. Read it without a
// sync through gate_residual_cuda_status_ref(), or with a sync (and a clear
// message) through gate_residual_cuda_sync_status(). Such a call also leaves a
// report in pinned host memory, which gate_residual_cuda_take_report() reads
// without any CUDA call once the call has finished on the device.
#pragma once

#include <cstdint>
#include <string>

#include "../gate_residual.h"

namespace gatecheck {

Status gate_residual_fwd_cuda(const gatecheck_problem& p, const void* res, const void* gate,
                              const int64_t* index, const void* y, void* out);
Status gate_residual_bwd_cuda(const gatecheck_problem& p, const void* grad_out, const void* gate,
                              const int64_t* index, const void* y, void* grad_res,
                              void* grad_gate, void* grad_y);

// The same with a strided gate view: unit column stride, gate_row_stride
// (>= dim) elements between gate rows, as in H3's (9, 6*dim) table. grad_gate
// stays dense [gates, dim].
Status gate_residual_fwd_cuda_strided(const gatecheck_problem& p, const void* res, const void* gate,
                                      int64_t gate_row_stride, const int64_t* index, const void* y,
                                      void* out);
Status gate_residual_bwd_cuda_strided(const gatecheck_problem& p, const void* grad_out, const void* gate,
                                      int64_t gate_row_stride, const int64_t* index, const void* y,
                                      void* grad_res, void* grad_gate, void* grad_y);

// The backward for a caller that takes grad_out itself as grad_res (as torch
// autograd does; the LibTorch op): grad_res is neither taken nor written,
// which saves rows x dim elements written. The plugin ABI, whose caller owns
// every output buffer, always writes it.
Status gate_residual_bwd_cuda_strided_no_grad_res(const gatecheck_problem& p, const void* grad_out,
                                                  const void* gate, int64_t gate_row_stride,
                                                  const int64_t* index, const void* y, void* grad_gate,
                                                  void* grad_y);

// The reproducible mode (implementation "cuda-repro", binned_sum.h): the same
// plan, tile kernel and memory traffic as the backward above, with each
// tile's grad_gate sums kept as exact binned states in registers (no
// atomics), written per tile and folded per gate (integers: any order gives
// the same words). grad_res and grad_y as the backward writes them; grad_gate
// rounded once from the state; `state` (gates x dim x kBinnedWords words on
// the device, may be null) gets the gate's state for the split exchange.
Status gate_residual_bwd_cuda_binned(const gatecheck_problem& p, const void* grad_out, const void* gate,
                                     const int64_t* index, const void* y, void* grad_res, void* grad_gate,
                                     void* grad_y, uint64_t* state);
// Only the state (the split exchange's partial): reads grad_out, y and the
// index; writes no gradient.
Status gate_residual_binned_partial_cuda(const gatecheck_problem& p, const void* grad_out, const int64_t* index,
                                         const void* y, uint64_t* state);

// Index errors without a host sync, for callers that must not wait for the GPU
// (the LibTorch op, CUDA graphs). The last kernel of a call whose index check
// failed fills the stream's report (pinned host memory the device writes; the
// first report stays until it is taken).
// - gate_residual_cuda_take_report: the error of the report on `stream` (the
//   current device), if the device has written one: "<op>: index[r] = v is out
//   of range [0, gates) ..., found by an earlier forward|backward on this
//   stream, which wrote nothing". The report is then emptied and, unless the
//   stream is being captured, the status word cleared on the stream (so that a
//   CUDA graph's later launches, whose epochs are fixed, start clean). No
//   sync, no allocation: a call that has not yet finished on the device is
//   reported by a later take. Success when there is no report.
//   `op` names the op in the message of a report that these kernels left;
//   other ops' kernels on the stream share the status word and the report
//   (rmsnorm_modulate_cuda_run_deferred) and name their own op.
// - gate_residual_cuda_wait_and_take_reports: waits for the current device
//   (cudaDeviceSynchronize), then takes the report of every stream that ran
//   these kernels on it: the first error found, or the first CUDA error.
//   Success at once where no call ran on the device.
Status gate_residual_cuda_take_report(const char* op, void* stream);
Status gate_residual_cuda_wait_and_take_reports(const char* op);

// Where the index status of the most recent call on a stream lives: a device
// word, and the call's epoch. Decode a copy of the word (taken after that call,
// e.g. with cudaMemcpyAsync into pinned memory) with cuda_status_bad_row().
struct CudaStatusRef {
  const unsigned long long* word = nullptr;  // device pointer; null before any call on the stream
  unsigned long long epoch = 0;
};
CudaStatusRef gate_residual_cuda_status_ref(void* stream);

// True, with the first out-of-range row, when `word` records one for `epoch`.
bool cuda_status_bad_row(unsigned long long word, unsigned long long epoch, int64_t* row);

// Synchronises p.stream, then returns the first CUDA error or the index error of
// the most recent call on that stream ("<op>: index[r] = v is out of range
// [0, gates)"), reading index[r] back from the device. That call's report, if
// it is still there, is taken with it.
Status gate_residual_cuda_sync_status(const char* op, const gatecheck_problem& p,
                                      const int64_t* index);

// Frees what the kernels keep for `stream` on the current device (its index
// status word and the backward's scratch), after waiting for the work queued
// on it. Call it before destroying a stream that ran these kernels; otherwise
// that state lives until the process ends. A later call on the stream starts
// afresh. Not while another thread has a call in flight on the same stream.
Status gate_residual_cuda_release_stream(void* stream);

// Tuning knobs (0 = automatic). The benchmark sets them to compare variants;
// GATECHECK_CUDA_TUNING="plan=1,tile=1,vec=8,no_pdl" sets them at start-up
// (all knobs: kernels/cuda/README.md),
// to take one backward path out of the picture when a kernel is suspect.
struct CudaTuning {
  int bwd_vector_bytes = 0;  // bytes per thread per tensor in the backward tile kernel: 4, 8 or 16
  int fwd_vector_bytes = 0;  // same for the forward
  int fwd_rows = 0;           // rows per forward block: 1, 2 or 4 (0: 4)
  bool no_pdl = false;        // launch without programmatic dependent launch
  bool stop_after_plan = false;  // backward: build the index plan only (to time it)
  bool device_wide_plan = false;  // backward: the many-gates plan path (CUB scan) for any gates
  // backward index plan: 0 automatic, 1 CUB sort, 2 counting, 3 none in memory:
  // the one-kernel backward (2 and 3 where they apply, else automatic)
  int bwd_plan = 0;
  // backward tile kernel on a plan in memory: 0 automatic, 1 one thread per
  // column, 2 staged through registers, 3 copy pipeline (16-byte rows only),
  // 4 short tiles (one thread per column, 4 consecutive tiles a block). The
  // reproducible mode's binned tiles take 1 or 3 (automatic: 3 where rows
  // are 16-byte aligned and gates have 64 rows on average).
  int bwd_tile = 0;
  // copy pipeline (plan 3, tile 3): bytes of a row per block and tensor, 256, 448 or 512 (0: 512)
  int pipe_row_bytes = 0;
  // one-kernel backward (plan 3): threads per block, 256 or 512 (0: 256), and
  // columns summed per thread, 1 or 2 (0: 2; the reproducible mode's copy
  // pipeline, 0: 1)
  int pipe_threads = 0;
  int pipe_cols = 0;
  // one-kernel backward: thread-block clusters of this many column chunks
  // (where the chunks divide evenly), so that blocks reading the same rows run
  // side by side (0 or 1: none)
  int fused_cluster = 0;
  // one-block index plan: warps, 8 or 16 (0 or 16: 16 where its shared memory
  // fits, else 8)
  int plan_warps = 0;
  // the reproducible mode's combine of states: threads an element, 1, 2, 4
  // or 8 (0: automatic, binned_state_cuda.cuh)
  int combine_threads = 0;
  // the reproducible mode's combine: a grid of this many blocks an SM, each
  // striding over the elements (0: a block for every 128 / threads elements)
  int combine_blocks_per_sm = 0;
  // the reproducible mode's combine: read-only cached loads rather than
  // streaming ones (evict first: about 3% faster on the H200)
  bool combine_cached = false;
  // the reproducible mode's copy pipeline: stages of shared memory, 3 or 4 (0: 3)
  int binned_pipe_depth = 0;
};
CudaTuning& gate_residual_cuda_tuning();

// A measuring build (-DGATECHECK_PIPE_PHASES) of the one-kernel backward adds
// up, per warp, the SM cycles of each phase: plan, copy issue, copy wait,
// the stage's barrier, grad_res/grad_y stores, column sums, the barrier at
// the end of a tile, the rest (loop tops, the fold).
// Returns the mean per warp since the last call (and clears the totals), or
// false in an ordinary build.
constexpr int kPipePhaseCount = 8;
inline const char* const kPipePhaseNames[kPipePhaseCount] = {"plan", "issue", "wait", "barrier1",
                                                             "passA", "passB", "barrier2", "rest"};
bool gate_residual_cuda_pipe_phases(double cycles_per_warp[kPipePhaseCount], unsigned long long* warps);
// The knobs from a GATECHECK_CUDA_TUNING text; items that are not understood
// are skipped and named in *warnings.
CudaTuning parse_cuda_tuning(const char* text, std::string* warnings);

// The same behind the plugin C ABI (devices = cuda). Its entry points
// synchronise the stream so that an index error is reported by the call.
const gatecheck_plugin* gate_residual_cuda_plugin();

}  // namespace gatecheck
