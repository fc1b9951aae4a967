// rmsnorm_modulate's CUDA kernels. The orders of every reduction are
// rmsnorm_modulate_order.h's; the host twin (kernels/host) follows them.
//
// Forward: one block per row (grid-stride over rows); the order's T partials
// of a row (rms_row_threads(dim)) are held by T / 4 threads, four a thread
// (Lanes); each partial sums the squares of its chunks, then the block folds
// them by the order's trees. Backward in one pass where a row's chunks load
// as 16 bytes and fit (bwd_onepass_kernel: a block of T threads walks a
// dweight group's rows in the tile order, each thread the same columns for
// the row statistics, dx and its column sums, those in shared memory where
// that lets two blocks share an SM, else in registers), else two passes:
// the row kernel for dx (sum x^2 and sum w*d*x together) stores rstd; the
// tile kernel sums dshift, dscale (per tile) and dweight (per group of tiles)
// with one thread per chunk of columns, reading x and g again. Both take an
// index plan (the rows sorted by gate, stable, cut into tiles of
// kRmsSegTileRows), and a last kernel folds the partials in order. No float
// atomics: every bit is fixed by the call.
// Vector loads (16 bytes) only where every tensor is 16-byte aligned and
// dim is a multiple of the chunk; otherwise the element path, same order (the
// forward moving chunks as shifted aligned blocks, load_row_chunk, and for
// 16-bit types x's row staged realigned in shared memory: staged). For 16-bit
// types the forward rounds pairs of elements in packed instructions
// (rmsnorm_modulate_cuda_pair.cuh), the same bits.
//
// This file is the host side: checks, scratch, the choice of path, launches.
// The kernels are in rmsnorm_modulate_cuda_*.cuh, a file a job: chunk (a
// 16-byte chunk's loads, roundings and stores), index (the index check),
// rows (the forward), staged (the forward off alignment), bwd_terms (the
// backward's per-element formulas), bwd_rows (dx and rstd per row),
// bwd_tiles, bwd_onepass, bwd_fold.
#include "rmsnorm_modulate_cuda.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <cstdint>
#include <string>
#include <vector>

#include "../gate_residual_dtype.h"
#include "../rmsnorm_modulate.h"
#include "../rmsnorm_modulate_order.h"
#include "cuda_error_status.h"
#include "device_occupancy.cuh"
#include "rmsnorm_modulate_cuda_bwd_fold.cuh"
#include "rmsnorm_modulate_cuda_bwd_onepass.cuh"
#include "rmsnorm_modulate_cuda_bwd_rows.cuh"
#include "rmsnorm_modulate_cuda_bwd_tiles.cuh"
#include "rmsnorm_modulate_cuda_index.cuh"
#include "rmsnorm_modulate_cuda_rows.cuh"
#include "rmsnorm_modulate_cuda_staged.cuh"
#include "rmsnorm_modulate_cuda_rstd.h"

namespace gatecheck {
namespace {

using namespace rmsnorm_cuda_detail;

constexpr int kMaxGridRows = 65535;  // blocks of the row kernels; more rows loop (grid-stride)

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// Scratch carved from one allocation, each piece 256-byte aligned.
struct Carve {
  size_t bytes = 0;
  char* base = nullptr;
  template <class U> U* take(size_t n) {
    const size_t at = (bytes + 255) / 256 * 256;
    bytes = at + n * sizeof(U);
    return base ? reinterpret_cast<U*>(base + at) : nullptr;
  }
};

struct Layout {
  int *count, *tiles, *multi, *seg_start, *tile_start, *multi_start, *keys, *vals, *keys_sorted, *rows_sorted;
  int *fold_gates, *fold_count;
  float *rstd, *seg_part, *dw_part;
  void* cub_tmp;
  size_t cub_bytes;
};

int64_t slots_bound(int64_t rows, int64_t gates) {
  // A gate with two or more tiles has more than kRmsSegTileRows rows, so its
  // tiles are at most twice its rows over the tile.
  const int64_t b = 2 * ((rows + kRmsSegTileRows - 1) / kRmsSegTileRows);
  const int64_t m = rms_max_tiles(rows, gates);
  return b < m ? b : m;
}

Layout carve(Carve& cv, int64_t rows, int64_t dim, int64_t gates, size_t cub_bytes) {
  Layout l{};
  const size_t G = size_t(gates + 1), R = size_t(rows);
  const int64_t groups = (rms_max_tiles(rows, gates) + rms_tiles_per_group(rows, gates) - 1) /
                         rms_tiles_per_group(rows, gates);
  l.count = cv.take<int>(G);
  l.tiles = cv.take<int>(G);
  l.multi = cv.take<int>(G);
  l.seg_start = cv.take<int>(G);
  l.tile_start = cv.take<int>(G);
  l.multi_start = cv.take<int>(G);
  l.fold_gates = cv.take<int>(G);
  l.fold_count = cv.take<int>(1);
  l.keys = cv.take<int>(R);
  l.vals = cv.take<int>(R);
  l.keys_sorted = cv.take<int>(R);
  l.rows_sorted = cv.take<int>(R);
  l.rstd = cv.take<float>(R);
  l.seg_part = cv.take<float>(size_t(2 * slots_bound(rows, gates) * dim));
  l.dw_part = cv.take<float>(size_t(groups * dim));
  l.cub_tmp = cv.take<char>(cub_bytes);
  l.cub_bytes = cub_bytes;
  return l;
}

size_t cub_bytes_for(int64_t rows, int64_t gates, int end_bit) {
  size_t sort = 0, scan = 0, select = 0;
  cub::DeviceRadixSort::SortPairs(nullptr, sort, (const int*)nullptr, (int*)nullptr, (const int*)nullptr,
                                  (int*)nullptr, rows, 0, end_bit);
  cub::DeviceScan::ExclusiveSum(nullptr, scan, (const int*)nullptr, (int*)nullptr, gates + 1);
  cub::DeviceSelect::If(nullptr, select, thrust::counting_iterator<int>(0), (int*)nullptr, (int*)nullptr, gates,
                        FoldedGate{nullptr});
  return std::max({sort, scan, select});
}

int key_bits(int64_t gates) { return rmsnorm_gate_key_bits(gates, 31); }  // the plan's int keys

// The row kernels' three paths: 16-byte loads with the row kept in registers
// (kRmsChunksPerThread chunks a partial: every dim up to 2,048 chunks),
// 16-byte loads that read the rest of a wider row again for the second pass,
// element loads (any dim, any alignment).
enum class RowPath { kept, vector, element };
RowPath row_path(bool vec, int64_t dim, int v) {
  const int64_t nch = (dim + v - 1) / v;
  return !vec ? RowPath::element : nch <= int64_t(kRmsChunksPerThread) * rms_row_threads(dim, v) ? RowPath::kept
                                                                                                 : RowPath::vector;
}

int row_blocks(int64_t rows) { return int(rows < kMaxGridRows ? rows : kMaxGridRows); }

template <class T, int MAXT>
void launch_fwd_bounded(const Ptrs& a, bool vec, int threads, cudaStream_t s) {
  constexpr int V = VecOf<T>::value, M = kLanesPerThread;
  const int blocks = row_blocks(a.rows);
  switch (row_path(vec, a.dim, V)) {
    case RowPath::kept: fwd_kernel<T, true, kRmsChunksPerThread, M, MAXT><<<blocks, threads, 0, s>>>(a); break;
    case RowPath::vector: fwd_kernel<T, true, 0, M, MAXT><<<blocks, threads, 0, s>>>(a); break;
    case RowPath::element:
      if constexpr (kPacked<T>) {
        const int64_t smem = staged_fwd_smem_bytes(a.dim, V);
        if (smem <= kStagedFwdSmemMax) {  // 16-bit rows staged in shared memory
          fwd_staged_kernel<T, M, MAXT><<<blocks, threads, size_t(smem), s>>>(a);
          break;
        }
      }
      fwd_kernel<T, false, 0, M, MAXT><<<blocks, threads, 0, s>>>(a);
      break;
  }
}

template <class T>
void launch_fwd(const Ptrs& a, bool vec, cudaStream_t s) {
  const int threads = row_kernel_threads(a.dim, VecOf<T>::value);
  if (threads <= kRowKernelNarrowThreads) launch_fwd_bounded<T, kRowKernelNarrowThreads>(a, vec, threads, s);
  else launch_fwd_bounded<T, kRowKernelMaxThreads>(a, vec, threads, s);
}

// The one-pass kernel where it applies (16-byte loads, at most two chunks a
// partial, T <= kOnePassMaxThreads, its rows in shared memory) and
// pays (dweight groups for two waves of one block an SM at least: fewer leave
// SMs idle, and the two passes spread the rows wider): the blocks that fit at
// once, each walking its dweight groups. False: the two passes' problem.
int sm_count() {
  int n = 0;
  return cuda_occupancy::sm_count(&n) == cudaSuccess && n > 0 ? n : 1;
}

std::atomic<int64_t> onepass_grid_limit{0};

template <class T, int CPT, bool SHARED>
void launch_onepass_k(const Ptrs& a, const Plan& p, int threads, int64_t groups, cudaStream_t s) {
  constexpr auto kernel = bwd_onepass_kernel<T, CPT, SHARED>;
  // The kernel's dynamic shared memory limit, raised once to the most it takes.
  static const cudaError_t raised =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kOnePassSmemMax));
  (void)raised;  // a failure shows as the launch's error
  // As many blocks as fit at once, each walking its groups, so that a block
  // loads its next group's positions during this one's rows rather than
  // starting cold (a failed query shows as the launch's error, if any).
  const size_t smem = size_t(onepass_smem_bytes(a.dim, VecOf<T>::value, SHARED, threads));
  int per_sm = 0;
  if (cuda_occupancy::resident_blocks_per_sm<kernel>(threads, smem, &per_sm) != cudaSuccess || per_sm < 1) per_sm = 1;
  int64_t grid = std::min<int64_t>(groups, int64_t(per_sm) * sm_count());
  if (const int64_t cap = onepass_grid_limit.load(); cap > 0) grid = std::min(grid, cap);
  kernel<<<unsigned(std::max<int64_t>(grid, 1)), threads, smem, s>>>(a, p);
}

// Rows of `dim` elements in 16-byte chunks the one pass takes: at most
// kOnePassMaxThreads partials of at most two chunks each, its rows' stages
// within its shared memory.
bool onepass_fits(int64_t dim, int vec) {
  const int threads = rms_row_threads(dim, vec);
  return dim % vec == 0 && threads <= kOnePassMaxThreads && dim / vec <= int64_t(kRmsChunksPerThread) * threads &&
         onepass_smem_bytes(dim, vec) <= kOnePassSmemMax;
}

// The one pass's sums in shared memory where the register kernel's blocks
// fit one an SM and two of these fit (its threads then own two chunks each).
bool onepass_sums_shared(int64_t dim, int vec) {
  const int threads = rms_row_threads(dim, vec);
  return onepass_fits(dim, vec) && threads > onepass_register_pair_threads(vec) && threads <= kOnePassLeanThreads &&
         2 * (onepass_smem_bytes(dim, vec, true, threads) + kSmemReservedPerBlock) <= kSmemPerSm;
}

template <class T>
bool launch_onepass(const Ptrs& a, const Plan& p, bool vec, int64_t groups, RmsBwdKernels k, cudaStream_t s) {
  constexpr int V = VecOf<T>::value;
  const int threads = rms_row_threads(a.dim, V);
  const int64_t nch = a.dim / V;
  if (!vec || !onepass_fits(a.dim, V) || (k == RmsBwdKernels::automatic && groups < 2 * sm_count())) return false;
  if (a.rows == 0) return true;
  if (k != RmsBwdKernels::one_pass_register_sums && onepass_sums_shared(a.dim, V))
    launch_onepass_k<T, 2, true>(a, p, threads, groups, s);
  else if (nch <= threads)
    launch_onepass_k<T, 1, false>(a, p, threads, groups, s);
  else
    launch_onepass_k<T, 2, false>(a, p, threads, groups, s);
  return true;
}

template <class T>
void launch_two_pass(const Ptrs& a, const Plan& p, bool vec, int64_t nch, int64_t groups, cudaStream_t s);

std::atomic<RmsBwdKernels> bwd_kernels{kRmsBwdKernelsDefault};

template <class T>
void launch_bwd(const Ptrs& a, const Layout& l, bool vec, cudaStream_t s) {
  Plan p{l.seg_start,  l.tiles,      l.tile_start, l.multi_start, l.rows_sorted, l.keys_sorted, l.fold_gates,
         l.fold_count, l.rstd,     l.seg_part,   l.dw_part,     rms_tiles_per_group(a.rows, a.gates)};
  const int64_t nch = (a.dim + VecOf<T>::value - 1) / VecOf<T>::value;
  const int64_t groups = (rms_max_tiles(a.rows, a.gates) + p.tiles_per_group - 1) / p.tiles_per_group;
  const RmsBwdKernels k = bwd_kernels.load();
  if (k == RmsBwdKernels::two_pass || !launch_onepass<T>(a, p, vec, groups, k, s))
    launch_two_pass<T>(a, p, vec, nch, groups, s);
  const int64_t fb = (a.gates * a.dim + kFoldThreads - 1) / kFoldThreads;
  // The most shared memory an SM can keep, so that kFoldBlocksPerSm blocks fit (the driver's
  // own choice left room for two: ncu's "Block Limit Shared Mem").
  static const cudaError_t carved =
      cudaFuncSetAttribute(bwd_fold_kernel<T>, cudaFuncAttributePreferredSharedMemoryCarveout, 100);
  (void)carved;  // a hint: a failure leaves the driver's choice
  bwd_fold_kernel<T><<<unsigned(fold_dw_blocks(a.dim) + (fb < 4096 ? fb : 4096)), kFoldThreads, 0, s>>>(a, p);
}

template <class T, int MAXT>
void launch_rows_bounded(const Ptrs& a, float* rstd, bool vec, int threads, cudaStream_t s) {
  constexpr int V = VecOf<T>::value, M = kLanesPerThread;
  const int blocks = row_blocks(a.rows);
  switch (row_path(vec, a.dim, V)) {
    case RowPath::kept: bwd_row_kernel<T, true, kRmsChunksPerThread, M, MAXT><<<blocks, threads, 0, s>>>(a, rstd); break;
    case RowPath::vector: bwd_row_kernel<T, true, 0, M, MAXT><<<blocks, threads, 0, s>>>(a, rstd); break;
    case RowPath::element: bwd_row_kernel<T, false, 0, M, MAXT><<<blocks, threads, 0, s>>>(a, rstd); break;
  }
}

template <class T>
void launch_rows(const Ptrs& a, float* rstd, bool vec, cudaStream_t s) {
  const int threads = row_kernel_threads(a.dim, VecOf<T>::value);
  if (threads <= kRowKernelNarrowThreads) launch_rows_bounded<T, kRowKernelNarrowThreads>(a, rstd, vec, threads, s);
  else launch_rows_bounded<T, kRowKernelMaxThreads>(a, rstd, vec, threads, s);
}

// The row kernel (dx, rstd), then the tile kernel (dshift, dscale and dweight
// partials), reading x and g again.
template <class T>
void launch_two_pass(const Ptrs& a, const Plan& p, bool vec, int64_t nch, int64_t groups, cudaStream_t s) {
  if (a.rows > 0) {
    launch_rows<T>(a, const_cast<float*>(p.rstd), vec, s);
  }
  if (groups > 0) {
    const dim3 grid(unsigned((nch + kTileThreads - 1) / kTileThreads), unsigned(groups < 65535 ? groups : 65535));
    if (vec) bwd_tile_kernel<T, true><<<grid, kTileThreads, 0, s>>>(a, p);
    else bwd_tile_kernel<T, false><<<grid, kTileThreads, 0, s>>>(a, p);
  }
}

Ptrs ptrs_of(const OpCall& c, const unsigned long long* bad) {
  const OpSchema& op = *c.op;
  Ptrs a;
  auto in = [&](const char* n) { return c.input(n).data; };
  auto out = [&](const char* n) { return c.output(n).data; };
  a.x = in("x");
  a.w = in("w");
  a.shift = in("shift");
  a.scale = in("scale");
  a.g = in("grad_out");
  a.index = static_cast<const int64_t*>(in("index"));
  a.out = out("out");
  a.dx = out("dx");
  a.dweight = out("dweight");
  a.dshift = out("dshift");
  a.dscale = out("dscale");
  a.rows = c.p.rows;
  a.dim = c.p.dim;
  a.gates = c.p.gates;
  a.eps = float(c.scalars[size_t(op.scalar_index("eps"))]);
  a.bad = bad;
  return a;
}

// Every tensor the kernels read or write at 16 bytes, and rows that keep it.
bool vector_ok(const Ptrs& a, int elem_bytes) {
  if (a.dim % rms_vec(elem_bytes) != 0) return false;
  for (const void* p : {a.x, a.w, a.shift, a.scale, a.g, static_cast<const void*>(a.out),
                        static_cast<const void*>(a.dx), static_cast<const void*>(a.dshift),
                        static_cast<const void*>(a.dscale)})
    if (p && !aligned16(p)) return false;
  return true;
}

// scratch: rmsnorm_modulate_cuda_bwd_scratch_bytes of the caller's, or null:
// the stream's memory pool, given back before the call returns.
template <class T>
Status run_typed(const OpCall& c, unsigned long long* bad, void* scratch) {
  const char* who = c.pass == Pass::forward ? "rmsnorm_modulate_fwd" : "rmsnorm_modulate_bwd";
  cudaStream_t s = static_cast<cudaStream_t>(c.p.stream);
  const Ptrs a = ptrs_of(c, bad);
  const bool vec = vector_ok(a, int(sizeof(T)));
  cudaError_t e = cudaMemsetAsync(bad, 0xff, sizeof *bad, s);
  if (e != cudaSuccess) return cuda_error_status(who, "", e);
  const unsigned check_blocks = unsigned(a.rows > 0 ? (a.rows + 255) / 256 < 4096 ? (a.rows + 255) / 256 : 4096 : 1);
  if (c.pass == Pass::forward) {
    if (a.rows == 0 || a.dim == 0) return Status::success();
    check_index_kernel<<<check_blocks, 256, 0, s>>>(a.index, a.rows, a.gates, bad, nullptr, nullptr, nullptr);
    launch_fwd<T>(a, vec, s);
    e = cudaGetLastError();
    return cuda_error_status(who, "", e);
  }
  if (a.dim == 0) return Status::success();
  const int bits = key_bits(a.gates);
  const size_t cub_bytes = cub_bytes_for(a.rows, a.gates, bits);
  Carve cv;
  carve(cv, a.rows, a.dim, a.gates, cub_bytes);
  if (scratch) cv.base = static_cast<char*>(scratch);
  else if ((e = cudaMallocAsync(reinterpret_cast<void**>(&cv.base), cv.bytes, s)) != cudaSuccess)
    return cuda_error_status(who, "", e);
  cv.bytes = 0;
  const Layout l = carve(cv, a.rows, a.dim, a.gates, cub_bytes);
  const size_t G = size_t(a.gates + 1);
  cudaMemsetAsync(l.count, 0, G * sizeof(int), s);
  if (a.rows > 0) {
    check_index_kernel<<<check_blocks, 256, 0, s>>>(a.index, a.rows, a.gates, bad, l.count, l.keys, l.vals);
    size_t tb = l.cub_bytes;
    cub::DeviceRadixSort::SortPairs(l.cub_tmp, tb, l.keys, l.keys_sorted, l.vals, l.rows_sorted, a.rows, 0, bits, s);
  }
  if (a.gates <= kPlanScanGates) {
    plan_scan_kernel<<<1, kPlanScanThreads, 0, s>>>(l.count, a.gates, l.tiles, l.seg_start, l.tile_start, l.multi_start,
                                                    l.fold_gates, l.fold_count);
  } else {
    const unsigned gb = unsigned((G + 255) / 256 < 4096 ? (G + 255) / 256 : 4096);
    tile_counts_kernel<<<gb, 256, 0, s>>>(l.count, a.gates, l.tiles, l.multi);
    size_t tb = l.cub_bytes;
    cub::DeviceScan::ExclusiveSum(l.cub_tmp, tb, l.count, l.seg_start, int64_t(G), s);
    cub::DeviceScan::ExclusiveSum(l.cub_tmp, tb, l.tiles, l.tile_start, int64_t(G), s);
    cub::DeviceScan::ExclusiveSum(l.cub_tmp, tb, l.multi, l.multi_start, int64_t(G), s);
    cub::DeviceSelect::If(l.cub_tmp, tb, thrust::counting_iterator<int>(0), l.fold_gates, l.fold_count, a.gates,
                          FoldedGate{l.tiles}, s);
  }
  launch_bwd<T>(a, l, vec, s);
  e = cudaGetLastError();
  const cudaError_t f = scratch ? cudaSuccess : cudaFreeAsync(cv.base, s);
  if (e == cudaSuccess) e = f;
  return cuda_error_status(who, "", e);
}

}  // namespace

void rmsnorm_modulate_cuda_set_bwd_kernels(RmsBwdKernels k) { bwd_kernels.store(k); }
void rmsnorm_modulate_cuda_set_onepass_grid_limit(int64_t blocks) { onepass_grid_limit.store(blocks); }

bool rmsnorm_modulate_cuda_onepass_sums_shared(int64_t dim, DType t) {
  bool shared = false;
  dispatch_dtype(t, [&](auto tag) { shared = onepass_sums_shared(dim, VecOf<decltype(tag)>::value); });
  return shared;
}

int64_t rmsnorm_modulate_cuda_bwd_scratch_bytes(int64_t rows, int64_t dim, int64_t gates) {
  Carve cv;
  carve(cv, rows, dim, gates, cub_bytes_for(rows, gates, key_bits(gates)));
  return int64_t(cv.bytes);
}

Status rmsnorm_modulate_cuda_check_size(const OpCall& c) {
  if (c.p.rows <= INT32_MAX && c.p.gates <= INT32_MAX) return Status::success();
  return Status::error(ErrorKind::size_overflow,
                       (c.pass == Pass::forward ? c.op->fwd_name() : c.op->bwd_name()) +
                           ": rows and gates must each be below 2^31 for the cuda kernels");
}

Status rmsnorm_modulate_cuda_run(const OpCall& c, unsigned long long* bad_row, void* scratch) {
  const char* op = c.pass == Pass::forward ? "rmsnorm_modulate_fwd" : "rmsnorm_modulate_bwd";
  Status s = rmsnorm_modulate_cuda_check_size(c);
  if (!s.ok()) return s;
  if (!dispatch_dtype(DType(c.p.dtype), [&](auto tag) { s = run_typed<decltype(tag)>(c, bad_row, scratch); }))
    return check_problem(op, c.p, 1u << GATECHECK_CUDA);  // (an unchecked call): names the bad dtype
  return s;
}

Status rmsnorm_modulate_cuda_rstd(const OpCall& c, float* rstd) {
  const Ptrs a = ptrs_of(c, nullptr);
  if (a.rows == 0 || a.dim == 0) return Status::success();
  const auto s = static_cast<cudaStream_t>(c.p.stream);
  const int blocks = int(a.rows < kMaxGridRows ? a.rows : kMaxGridRows);
  auto launch = [&](auto tag) {
    using T = decltype(tag);
    constexpr int V = VecOf<T>::value;
    const int threads = rms_row_threads(a.dim, V);
    if (a.dim % V == 0 && aligned16(a.x)) rstd_kernel<T, true><<<blocks, threads, 0, s>>>(a, rstd);
    else rstd_kernel<T, false><<<blocks, threads, 0, s>>>(a, rstd);
  };
  if (!dispatch_dtype(DType(c.p.dtype), launch))  // (an unchecked call): the error names the bad dtype
    return check_problem("rmsnorm_modulate_rstd", c.p, 1u << GATECHECK_CUDA);
  const cudaError_t e = cudaGetLastError();
  return cuda_error_status("rmsnorm_modulate_rstd", "", e);
}

Status rmsnorm_modulate_cuda_dx(const OpCall& c, const unsigned long long* bad, float* rstd) {
  const Ptrs a = ptrs_of(c, bad);
  if (a.rows == 0 || a.dim == 0) return Status::success();
  const auto s = static_cast<cudaStream_t>(c.p.stream);
  if (!dispatch_dtype(DType(c.p.dtype), [&](auto tag) {
        using T = decltype(tag);
        launch_rows<T>(a, rstd, vector_ok(a, int(sizeof(T))), s);
      }))  // (an unchecked call): the error names the bad dtype
    return check_problem("rmsnorm_modulate_bwd", c.p, 1u << GATECHECK_CUDA);
  const cudaError_t e = cudaGetLastError();
  return cuda_error_status("rmsnorm_modulate_bwd", "", e);
}

}  // namespace gatecheck
