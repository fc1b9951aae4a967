// rmsnorm_modulate's CUDA kernels (implementation "cuda"), behind the plugin
// ABI v2. The reduction orders are rmsnorm_modulate_order.h's, so the host
// twin computes the same bits. Every index is checked on the device before
// any output is written; the entry points synchronise the call's stream and
// report a bad index by row and value, having written nothing.
#pragma once

#include <cstdint>

#include "../gatecheck_plugin_v2.h"
#include "../op_schema.h"

namespace gatecheck {

// The kernels on a checked call (check_call, index on the device). Work is
// queued on c.p.stream; *bad_row (a device word) is set to the first row
// whose index is out of range, or to ~0 when there is none. Nothing is
// written to an output when there is one. A backward's scratch (the fp32
// partials and the index plan) is `scratch`, at least
// rmsnorm_modulate_cuda_bwd_scratch_bytes long and 256-byte aligned, or, when
// null, comes from the stream's memory pool and goes back to it before the
// call returns: no host sync either way.
Status rmsnorm_modulate_cuda_run(const OpCall& c, unsigned long long* bad_row, void* scratch = nullptr);
// What rmsnorm_modulate_cuda_run refuses first, with its words: rows or
// gates of 2^31 or more (the kernels keep both as int). For callers that run
// the kernels' pieces themselves (the reproducible mode's backward).
Status rmsnorm_modulate_cuda_check_size(const OpCall& c);

// The backward's kernels. one_pass: one kernel where a row's chunks load as
// 16 bytes, each of the order's partials has at most two of them and T is at
// most 512 (bwd_onepass_kernel: x and g read once), the two passes elsewhere;
// its column sums in shared memory where that lets two of its blocks share
// an SM (rmsnorm_modulate_cuda_onepass_sums_shared), in registers elsewhere.
// one_pass_register_sums: the same with the sums in registers everywhere.
// two_pass: the row kernel for dx, then the tile kernel for the column sums,
// reading x and g again, everywhere. automatic (the default): one_pass where
// it applies and the call has dweight groups for two waves of one block an
// SM, else two_pass. The same bits every way. Process-wide; for the tests
// that name each path and the benchmark, which times the default beside
// two_pass and one_pass_register_sums.
enum class RmsBwdKernels { two_pass, one_pass, one_pass_register_sums, automatic };
constexpr RmsBwdKernels kRmsBwdKernelsDefault = RmsBwdKernels::automatic;
void rmsnorm_modulate_cuda_set_bwd_kernels(RmsBwdKernels k);
// The one pass's grid: as many blocks as fit the GPU at once (0, the default),
// each walking its dweight groups, or at most `blocks`: for the tests that
// make each block walk many groups. Process-wide.
void rmsnorm_modulate_cuda_set_onepass_grid_limit(int64_t blocks);
// Whether the one pass keeps its column sums in shared memory for rows of
// `dim` elements of type t (16-byte loads; 4,104 to 5,632 columns of 16-bit
// types, 288 to 352 threads; 2,564 to 2,816 of f32, 352 threads): a host
// question, for the tests that name the path.
bool rmsnorm_modulate_cuda_onepass_sums_shared(int64_t dim, DType t);

// Bytes of scratch a backward of this problem takes at most: the fp32
// partials of its reductions (dshift and dscale per tile of gates with
// several tiles, at most 2 * min(2 * ceil(rows / 32), tiles) rows of dim
// floats; dweight per group, at most about 4,096 rows of dim floats), rstd
// (a float a row), and the index plan (4 ints a row, 6 a gate, and CUB's sort
// space). gatecheck-rmsnorm-bench prints it beside each shape.
int64_t rmsnorm_modulate_cuda_bwd_scratch_bytes(int64_t rows, int64_t dim, int64_t gates);

// For callers that never wait for the GPU (the LibTorch op, CUDA graphs): the
// kernels on c.p.stream, in the caller's scratch (rmsnorm_modulate_cuda_
// deferred_scratch_bytes long, 256-byte aligned: the bad-row word, then a
// backward's scratch). No allocation, no sync. A bad index is recorded in the
// stream's index status and report, the ones gate_residual's kernels keep
// (gate_residual_cuda.h), under the name `op` (a static string): the report is
// raised by gate_residual_cuda_take_report or gate_residual_cuda_wait_and_
// take_reports, the status read by gate_residual_cuda_sync_status. As there,
// the first call on a stream allocates that state, which a stream being
// captured into a CUDA graph cannot: that call fails, saying so. The
// contract's checks (check_call) are the caller's.
Status rmsnorm_modulate_cuda_run_deferred(const OpCall& c, void* scratch, const char* op);
int64_t rmsnorm_modulate_cuda_deferred_scratch_bytes(const OpCall& c);
// The same record for a bad row that other kernels on c.p.stream found (*bad,
// a device word, ~0 for none): the reproducible mode's state op.
Status rmsnorm_modulate_cuda_defer_bad_row(const OpCall& c, const unsigned long long* bad, const char* op);

// Bits of a radix sort's key for gate ids in [0, gates), at most `key_bits`
// (the key's width less its sign): the backward's index plan (int keys, 31)
// and cuda-repro's sort of the rows by gate (int64 keys, 63).
inline int rmsnorm_gate_key_bits(int64_t gates, int key_bits) {
  int b = 1;
  while (b < key_bits && (int64_t(1) << b) < gates) ++b;
  return b;
}

const gatecheck_op_plugin* rmsnorm_modulate_cuda_plugin();

}  // namespace gatecheck
