// Dispatch layer of the CUDA kernels: validates (no device round trip), picks
// the vector width and launch shape, builds the backward's index plan and
// launches, all on p.stream.
//
// Backward pipeline (no host sync, no float atomics):
//   plan      the index check and the gate-sorted row order with its tile
//             descriptors (gate_residual_cuda_plan.cuh): one block up to 8192
//             rows and 8192 gates; else, up to 2048 gates, two kernels
//             (per-chunk histograms; per-chunk block sort and scatter); else
//             a prologue, a CUB stable radix sort and a scan. (Or no plan in memory at all: the
//             one-kernel backward of gate_residual_cuda_pipe.cuh.)
//   tiles     grad_res, grad_y and per-tile fp32 partials (single-tile gates
//             and unused gates write grad_gate directly): staged through
//             shared memory for long tiles, one thread per column otherwise
//   fold      multi-tile gates: partials folded in tile order, rounded once
#include "gate_residual_cuda.h"

#include <cuda_runtime.h>

#include <cub/block/block_radix_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <string>
#include <utility>

#include "../gate_residual_dtype.h"
#include "cuda_error_status.h"
#include "device_occupancy.cuh"
#include "gate_residual_cuda_kernels.cuh"
#include "gate_residual_cuda_pipe.cuh"
#include "gate_residual_cuda_workspace.h"

namespace gatecheck {

using namespace cuda_detail;

namespace {

constexpr uint32_t kCudaDevices = 1u << GATECHECK_CUDA;

// A call that would allocate while its stream is being captured into a CUDA
// graph (reported by workspace_for and reserve_blob as
// cudaErrorStreamCaptureUnsupported), said plainly.
Status capture_failure(const char* op, const char* what) {
  char buf[384];
  std::snprintf(buf, sizeof buf,
                "%s: the stream is being captured into a CUDA graph and %s, which needs an allocation: "
                "call it once on this stream before capturing",
                op, what);
  return Status::error(ErrorKind::implementation, buf);
}

bool aligned(const void* p, int bytes) { return reinterpret_cast<uintptr_t>(p) % uintptr_t(bytes) == 0; }

// Largest access width (16, 8, 4 bytes, else one element) such that every row
// of every tensor starts aligned to it; `cap` (0 = none) limits it.
int vector_bytes(int elem, int64_t dim, std::initializer_list<const void*> ptrs, int cap) {
  for (int w : {16, 8, 4}) {
    if (w < elem || (cap && w > cap)) continue;
    if ((dim * elem) % w != 0) continue;
    bool ok = true;
    for (const void* p : ptrs) ok = ok && aligned(p, w);
    if (ok) return w;
  }
  return elem;
}

// Threads per block (a multiple of 32 in [64, 256]) covering `vecs` column
// vectors with the least idle lanes; ties go to the larger block.
int threads_for(int64_t vecs) {
  int best = 256;
  int64_t best_waste = -1;
  for (int t = 256; t >= 64; t -= 32) {
    const int64_t waste = (vecs + t - 1) / t * t - vecs;
    if (best_waste < 0 || waste < best_waste) { best = t; best_waste = waste; }
  }
  return best;
}

unsigned grid_y_for(int64_t vecs, int threads) {
  const int64_t chunks = (vecs + threads - 1) / threads;
  return unsigned(chunks < 65535 ? chunks : 65535);
}

unsigned grid_1d(int64_t n, int threads) {
  const int64_t b = (n + threads - 1) / threads;
  return unsigned(b < 1 ? 1 : b > 65535 * 16 ? 65535 * 16 : b);
}

// Calls f(std::integral_constant<int, N>) for N = bytes / sizeof(T).
template <class T, class F>
void dispatch_width(int bytes, F&& f) {
  switch (bytes) {
    case 16: f(std::integral_constant<int, 16 / int(sizeof(T))>{}); break;
    case 8: f(std::integral_constant<int, 8 / int(sizeof(T))>{}); break;
    case 4: f(std::integral_constant<int, 4 / int(sizeof(T))>{}); break;
    default: f(std::integral_constant<int, 1>{}); break;
  }
}

Status common_limits(const char* op, const gatecheck_problem& p) {
  char buf[256];
  if (p.rows >= cuda_status::kMaxRows) {
    std::snprintf(buf, sizeof buf, "%s: rows = %" PRId64 " exceeds the CUDA kernels' limit %" PRId64, op,
                  p.rows, cuda_status::kMaxRows);
    return Status::error(ErrorKind::size_overflow, buf);
  }
  if (p.gates + p.rows / kGradGateTileRows + 1 > int64_t(0x7fffffff)) {
    std::snprintf(buf, sizeof buf, "%s: gates = %" PRId64 " exceeds the CUDA kernels' limit", op, p.gates);
    return Status::error(ErrorKind::size_overflow, buf);
  }
  return Status::success();
}

// The start of every call, after the contract's own checks (`checked`): the
// strided gate view, the kernels' limits, then this stream's workspace with a
// fresh epoch (so the status never reports an earlier call). Null, with the
// reason in *err, when the call cannot go on.
Workspace* begin_cuda_call(const char* op, const gatecheck_problem& p, Status checked, const void* gate,
                           int64_t gate_row_stride, Status* err, bool gate_optional = false) {
  Status st = std::move(checked);
  if (st.ok() && (gate || !gate_optional))
    st = check_tensor(op, p, TensorArg{"gate", gate, DType(p.dtype), p.gates, p.dim, gate_row_stride}, p.gates,
                      p.dim);
  if (st.ok()) st = common_limits(op, p);
  if (!st.ok()) {
    *err = st;
    return nullptr;
  }
  const auto s = static_cast<cudaStream_t>(p.stream);
  cudaError_t e;
  Workspace* w = workspace_for(s, &e);
  if (!w) {
    *err = e == cudaErrorStreamCaptureUnsupported
               ? capture_failure(op, "this is the first call on the stream (it allocates the stream's state)")
               : cuda_error_status(op, " in workspace", e);
    return nullptr;
  }
  if ((e = begin_call(*w, s)) != cudaSuccess) {
    *err = cuda_error_status(op, " in begin", e);
    return nullptr;
  }
  return w;
}

// Launches with programmatic dependent launch allowed: the kernel may start
// while the previous one drains; it calls wait_for_previous_kernel() first.
// `cluster` > 1 also groups that many blocks along x into a thread-block
// cluster, where it divides grid.x (else none).
template <class... KArgs, class... Args>
void launch_after_in_clusters(void (*kernel)(KArgs...), dim3 grid, dim3 block, size_t smem, cudaStream_t s,
                              unsigned cluster, Args... args) {
  cudaLaunchAttribute attr[2];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = gate_residual_cuda_tuning().no_pdl ? 0 : 1;
  attr[1].id = cudaLaunchAttributeClusterDimension;
  attr[1].val.clusterDim.x = cluster;
  attr[1].val.clusterDim.y = 1;
  attr[1].val.clusterDim.z = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = s;
  cfg.attrs = attr;
  cfg.numAttrs = cluster > 1 && grid.x % cluster == 0 ? 2 : 1;
  cudaLaunchKernelEx(&cfg, kernel, args...);  // errors surface through cudaGetLastError()
}
template <class... KArgs, class... Args>
void launch_after(void (*kernel)(KArgs...), dim3 grid, dim3 block, size_t smem, cudaStream_t s, Args... args) {
  launch_after_in_clusters(kernel, grid, block, smem, s, 1u, args...);
}

size_t align_up(size_t n) { return (n + 255) & ~size_t(255); }

// Byte offsets of the backward's scratch in the workspace blob. The per-gate
// counters come first, so that they stay in place from call to call.
struct BwdLayout {
  int64_t counter_slots;  // 8-byte counters at the start: the CUB path's per-gate counts, the fused path's per (gate, column chunk) tile counts
  size_t counts, row_ids, order, keys, plan, tiles, folds, partials, sort_tmp, scan_tmp, hist, total;
  size_t sort_bytes, scan_bytes;
  int64_t tile_bound, multi_bound, slot_bound;
  int end_bit;       // CUB path: bits of gates - 1
  int chunks;        // counting path: row chunks (0: the path does not apply)
  int chunk_bits;    // counting path: bits of gates (padding rows sort as `gates`)
};

// The counting path applies up to kCountGates gates while every scatter block
// reads a bounded histogram (and per-gate counts fit 32 bits).
int counting_chunks(const gatecheck_problem& p) {
  const int64_t chunks = (p.rows + kSortChunk - 1) / kSortChunk;
  if (p.gates > kCountGates || p.rows >= (int64_t(1) << 31) || chunks * p.gates > kCountHistMax) return 0;
  return int(chunks);
}

// The one-kernel backward is chosen up to this many rows (every block scans
// the whole index) and where its grid (column chunks x the bound on tiles)
// takes at most this many waves of resident blocks. H200
// (docs/kernel-design.md, "Where it is chosen"): at 4097 rows it matched or beat the counting plan
// with the copy pipeline up to 2.5 waves (4097 x 5376 x 32 gates, 1008
// blocks for 396 slots: 101.9 against 101.2 us; the automatic choice there
// had been per-thread tiles, 111.2-111.8); at 8192 rows it lost to it on all
// six shapes timed, by 2.5-11 us, from 1.2 waves up. 6144 lies between.
constexpr int64_t kFusedMaxWaves = 3;
constexpr int64_t kFusedAutoMaxRows = 6144;
// The one-kernel backward applies to short problems with few gates (every
// block reads the whole index) and 16-byte aligned rows (cp.async).
bool fused_applies(const gatecheck_problem& p, int max_bytes) {
  return p.rows <= kFusedMaxRows && p.gates >= 1 && p.gates <= kFusedMaxGates && max_bytes == 16;
}
// Its tile counters, one per (gate, column chunk), sized for the most chunks
// (fp32 at 256 bytes per row and block).
int64_t fused_counters(const gatecheck_problem& p) {
  if (p.rows > kFusedMaxRows || p.gates > kFusedMaxGates) return 0;
  return p.gates * pipe_chunks(p.dim, 4, 256);
}

// Makes the first n counters at the start of the blob zero (those earlier
// calls did not leave zero), on s.
cudaError_t zero_counters(Workspace& w, unsigned long long* counts, int64_t n, cudaStream_t s) {
  if (w.zeroed_counts >= n) return cudaSuccess;
  const cudaError_t e = cudaMemsetAsync(counts + w.zeroed_counts, 0, size_t(n - w.zeroed_counts) * 8, s);
  if (e == cudaSuccess) w.zeroed_counts = n;
  return e;
}

// Lets `Kernel` use up to `bytes` of dynamic shared memory on the current
// device, with the most shared memory per SM (several blocks each), once per
// device and kernel. (Keyed on the kernel itself: kernels of one type share
// nothing here.)
template <auto Kernel>
cudaError_t allow_pipe_smem(int bytes) {
  static std::atomic<uint64_t> done{0};
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  const uint64_t bit = dev < 64 ? uint64_t(1) << dev : 0;
  if (bit && (done.load() & bit)) return cudaSuccess;
  e = cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  if (e == cudaSuccess)
    e = cudaFuncSetAttribute(Kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared);
  if (e == cudaSuccess) done.fetch_or(bit);
  return e;
}

// The fewest bits b (1 <= b <= cap) with 2^b >= n: radix-sort bits for keys below n.
int bits_covering(int64_t n, int cap) {
  int bits = 1;
  while (bits < cap && (int64_t(1) << bits) < n) ++bits;
  return bits;
}

using PlanIter = thrust::transform_iterator<PlanCountOf, thrust::counting_iterator<int64_t>>;

cudaError_t plan_layout(const gatecheck_problem& p, BwdLayout* L) {
  L->tile_bound = p.gates + p.rows / kGradGateTileRows;
  L->multi_bound = std::min<int64_t>(p.gates, p.rows / (kGradGateTileRows + 1) + 1);
  L->slot_bound = 2 * (p.rows / kGradGateTileRows) + 1;
  L->end_bit = bits_covering(p.gates, 63);        // keys 0 .. gates-1
  L->chunks = counting_chunks(p);
  L->chunk_bits = bits_covering(p.gates + 1, 31);  // keys 0 .. gates (padding)
  L->sort_bytes = 0;
  cudaError_t e = cub::DeviceRadixSort::SortPairs(
      nullptr, L->sort_bytes, static_cast<const unsigned long long*>(nullptr),
      static_cast<unsigned long long*>(nullptr), static_cast<const int64_t*>(nullptr),
      static_cast<int64_t*>(nullptr), p.rows, 0, L->end_bit);
  if (e != cudaSuccess) return e;
  L->scan_bytes = 0;
  PlanIter it(thrust::counting_iterator<int64_t>(0), PlanCountOf{nullptr, p.gates});
  e = cub::DeviceScan::ExclusiveScan(nullptr, L->scan_bytes, it, static_cast<PlanCount*>(nullptr),
                                     PlanCountSum{}, PlanCount{0, 0, 0, 0}, p.gates + 1);
  if (e != cudaSuccess) return e;
  size_t at = 0;
  auto take = [&](size_t bytes) { const size_t o = at; at += align_up(bytes); return o; };
  const size_t r8 = size_t(p.rows) * 8;
  L->counter_slots = std::max<int64_t>(p.gates, fused_counters(p));
  L->counts = take(size_t(L->counter_slots) * 8);
  L->row_ids = take(r8);
  L->order = take(r8);
  L->keys = take(r8);
  L->plan = take(size_t(p.gates + 1) * sizeof(PlanCount));
  L->tiles = take(size_t(L->tile_bound) * sizeof(TileDesc));
  L->folds = take(size_t(L->multi_bound) * sizeof(FoldDesc));
  L->partials = take(size_t(L->slot_bound) * size_t(p.dim) * sizeof(float));
  L->sort_tmp = take(L->sort_bytes);
  L->scan_tmp = take(L->scan_bytes);
  L->hist = take(size_t(L->chunks) * size_t(p.gates) * sizeof(unsigned));
  L->total = at;
  return cudaSuccess;
}

// The layout for p, from the workspace's one-entry cache when the shape repeats.
cudaError_t cached_layout(const gatecheck_problem& p, Workspace& w, BwdLayout* L) {
  if (w.layout && w.layout_key[0] == p.rows && w.layout_key[1] == p.gates && w.layout_key[2] == p.dim) {
    *L = *static_cast<const BwdLayout*>(w.layout.get());
    return cudaSuccess;
  }
  cudaError_t e = plan_layout(p, L);
  if (e != cudaSuccess) return e;
  w.layout = std::make_shared<BwdLayout>(*L);
  w.layout_key[0] = p.rows;
  w.layout_key[1] = p.gates;
  w.layout_key[2] = p.dim;
  return cudaSuccess;
}

// Vector width of the backward tile kernel: the widest aligned one while the
// tiles x column vectors still give enough independent threads; narrower when
// there are few tiles (few, long segments on a short problem). Measured on the
// H200 (docs/kernel-design.md): 16 B wins from ~34k vector-threads up, 4 B below.
int bwd_width(int elem, const gatecheck_problem& p, int max_bytes, int sm_count) {
  const int tuned = gate_residual_cuda_tuning().bwd_vector_bytes;
  if (tuned) return std::max(elem, std::min(tuned, max_bytes));
  const int64_t enough = int64_t(sm_count) * 256;
  const int64_t tiles = p.gates + p.rows / kGradGateTileRows;
  int w = max_bytes;
  while (w > 4 && w > elem && tiles * (p.dim * elem / w) < enough) w /= 2;
  return w;
}

// Calls f(std::integral_constant<int, R>) with the forward's rows per block.
template <class F>
void dispatch_fwd_rows(int rows, F&& f) {
  switch (rows) {
    case 1: f(std::integral_constant<int, 1>{}); break;
    case 2: f(std::integral_constant<int, 2>{}); break;
    default: f(std::integral_constant<int, 4>{}); break;  // 2 was no faster at 4097 rows and 2-4% slower above: docs/kernel-design.md
  }
}

// Calls f(std::integral_constant<int, B>) with the copy pipeline's bytes per
// row and block: `bytes` (256, 448 or 512), or the tuned value.
template <class F>
void dispatch_row_bytes(int bytes, F&& f) {
  const int tuned = gate_residual_cuda_tuning().pipe_row_bytes;
  if (tuned) bytes = tuned;
  if (bytes == 256) f(std::integral_constant<int, 256>{});
  else if (bytes == 448) f(std::integral_constant<int, 448>{});
  else f(std::integral_constant<int, 512>{});
}

// The one-kernel backward's row segment. Its blocks, one per (tile, column
// chunk), spread over the SMs; the busiest SMs set the time. 448-byte
// segments where that puts no more blocks on the busiest SMs than 512 do,
// so each of their blocks moves 1/8 fewer bytes: at 4097 x 3072 (18 tiles)
// 252 blocks, two on 120 SMs, instead of 216, two on 84 SMs. The tiles are
// counted as if every gate had rows / gates rows (the host does not read the index).
int fused_row_bytes(const gatecheck_problem& p, int elem, int sm_count) {
  const int64_t per_gate = std::max<int64_t>(p.rows / p.gates, 1);
  const int64_t tiles = p.gates * ((per_gate + kGradGateTileRows - 1) / kGradGateTileRows);
  auto busiest = [&](int bytes) {
    const int64_t blocks = tiles * pipe_chunks(p.dim, elem, bytes);
    return (blocks + sm_count - 1) / sm_count * bytes;
  };
  return busiest(448) < busiest(512) ? 448 : 512;
}

// Calls f(threads, cols) with the one-kernel backward's block shape as
// integral constants: threads per block and columns summed per thread.
template <class F>
void dispatch_fused_shape(F&& f) {
  using std::integral_constant;
  const CudaTuning& t = gate_residual_cuda_tuning();
  if (t.pipe_threads == 512 && t.pipe_cols == 1) f(integral_constant<int, 512>{}, integral_constant<int, 1>{});
  else if (t.pipe_threads == 512) f(integral_constant<int, 512>{}, integral_constant<int, 2>{});
  else if (t.pipe_cols == 1) f(integral_constant<int, 256>{}, integral_constant<int, 1>{});
  else f(integral_constant<int, 256>{}, integral_constant<int, 2>{});
}

template <class T>
cudaError_t launch_fwd(const gatecheck_problem& p, const void* res, const void* gate, int64_t gate_stride,
                       const int64_t* index, const void* y, void* out, const Workspace& w,
                       cudaStream_t s) {
  const int elem = int(sizeof(T));
  int bytes = vector_bytes(elem, p.dim, {res, gate, y, out}, gate_residual_cuda_tuning().fwd_vector_bytes);
  bytes = std::min(bytes, vector_bytes(elem, gate_stride, {gate}, 0));  // every gate row aligned too
  FwdArgs<T> a{static_cast<const T*>(res), static_cast<const T*>(gate), index,
               static_cast<const T*>(y), static_cast<T*>(out), p.rows, p.dim, p.gates, gate_stride, w.status, w.epoch,
               w.report_dev};
  const CudaTuning& t = gate_residual_cuda_tuning();
  dispatch_width<T>(bytes, [&](auto n) {
    dispatch_fwd_rows(t.fwd_rows, [&](auto r) {
      constexpr int N = decltype(n)::value, R = decltype(r)::value;
      const int64_t vecs = p.dim / N;
      const int threads = threads_for(vecs);
      const dim3 grid(unsigned((p.rows + R - 1) / R), grid_y_for(vecs, threads));
      launch_after(fwd_kernel<T, N, R>, grid, dim3(threads), 0, s, a);
    });
  });
  return cudaGetLastError();
}

// Tiles a block of the short-tiles kernel takes.
constexpr int kShortTilesPerBlock = 4;
// Where the short-tiles kernel is chosen over one block a tile: about one
// gate per row, or at most 3 rows a gate above 8192 rows. H200, bf16
// forward+backward against the per-thread tiles: one gate per row 5-18%
// faster at 4097-131072 rows (32768 x 3072: 544.6 against 653.5 us); rows/3
// 1.0-2.2% faster at 32768 and 131072 rows but 0.2-2.9 us slower at 4097;
// rows/16 up to 11.6 us slower (4097 x 3072), faster only at 131072 x 5376.
bool short_tiles(const gatecheck_problem& p) {
  const int64_t per_gate = p.rows / std::max<int64_t>(p.gates, 1);
  return per_gate <= 1 || (per_gate <= 3 && p.rows > 8192);
}

// Rows each thread of the per-thread tile kernel keeps in flight on long tiles.
constexpr int rows_in_flight(int bytes) { return bytes >= 8 ? 8 : 16; }

// The CUB path of the index plan (any number of gates): prologue (index check,
// row ids, per-gate counts), stable radix sort by gate, scan and tiles.
cudaError_t cub_plan(const gatecheck_problem& p, const BwdLayout& L, char* base, const int64_t* index,
                     const unsigned long long* status, Workspace& w, cudaStream_t s) {
  auto* counts = reinterpret_cast<unsigned long long*>(base + L.counts);
  auto* row_ids = reinterpret_cast<int64_t*>(base + L.row_ids);
  auto* order = reinterpret_cast<int64_t*>(base + L.order);
  auto* keys = reinterpret_cast<unsigned long long*>(base + L.keys);
  auto* plan = reinterpret_cast<PlanCount*>(base + L.plan);
  auto* tiles = reinterpret_cast<TileDesc*>(base + L.tiles);
  auto* folds = reinterpret_cast<FoldDesc*>(base + L.folds);
  cudaError_t e;
  if ((e = zero_counters(w, counts, p.gates, s)) != cudaSuccess) return e;
  w.zeroed_counts = 0;  // until the plan step below is queued
  const int pt = 256;
  bwd_prepare_kernel<<<grid_1d(p.rows, pt), pt, 0, s>>>(index, p.rows, p.gates, w.status, w.epoch,
                                                        row_ids, counts);
  size_t sort_bytes = L.sort_bytes;
  e = cub::DeviceRadixSort::SortPairs(base + L.sort_tmp, sort_bytes,
                                      reinterpret_cast<const unsigned long long*>(index), keys,
                                      row_ids, order, p.rows, 0, L.end_bit, s);
  if (e != cudaSuccess) return e;
  if (p.gates <= kPlanBlockGates && !gate_residual_cuda_tuning().device_wide_plan) {
    launch_after(plan_block_kernel, dim3(1), dim3(kPlanThreads), 0, s, counts, p.gates, plan, tiles,
                 folds, status, w.epoch);
  } else {
    size_t scan_bytes = L.scan_bytes;
    PlanIter it(thrust::counting_iterator<int64_t>(0), PlanCountOf{counts, p.gates});
    e = cub::DeviceScan::ExclusiveScan(base + L.scan_tmp, scan_bytes, it, plan, PlanCountSum{},
                                       PlanCount{0, 0, 0, 0}, p.gates + 1, s);
    if (e != cudaSuccess) return e;
    launch_after(fill_tiles_kernel, dim3(grid_1d(p.gates, 128)), dim3(128), 0, s, counts,
                 static_cast<const PlanCount*>(plan), p.gates, tiles, folds, status, w.epoch);
  }
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  w.zeroed_counts = p.gates;
  return cudaSuccess;
}

// The reproducible mode's outputs (binned_sum.h): grad_gate's state and/or
// grad_gate itself (either may be null).
struct BinnedOut {
  uint64_t* state;
  void* grad_gate;
};

// The reproducible mode's per-thread tile kernel: today's per-thread tile
// kernel with binned sums (15 registers a column), 8 rows of loads in flight
// at up to 8 bytes of columns a thread, 4 at 16 bytes.
template <class T, int N>
constexpr auto binned_tile_kernel = bwd_tile_kernel<T, N, (N * int(sizeof(T)) <= 8 ? 8 : 4), BinnedTileSum<T, N>>;

template <class T, int N>
void launch_binned_tiles(const gatecheck_problem& p, const BwdArgs<T>& a, int64_t tiles, cudaStream_t s) {
  const int64_t vecs = p.dim / N;
  const int threads = threads_for(vecs);
  const dim3 grid(unsigned(tiles), grid_y_for(vecs, threads));
  launch_after(binned_tile_kernel<T, N>, grid, dim3(threads), 0, s, a);
}

// The per-thread binned tile kernel's width: 4 bytes of columns a thread (its
// sums take registers by the column, so narrow threads keep more blocks
// resident). On the H200, bf16, 3072 columns, 32 gates, with 10 registers a
// column (bench/results/split/repro-tiles/first/): 1.44x, 1.74x and 2.61x the
// cuda backward at 4, 8 and 16 bytes at 32768 rows. The tuning's vec=
// overrides it.
template <class T>
int binned_width(int max_bytes) {
  const int elem = int(sizeof(T));
  if (gate_residual_cuda_tuning().bwd_vector_bytes)
    return std::max(elem, std::min(gate_residual_cuda_tuning().bwd_vector_bytes, max_bytes));
  return std::max(elem, std::min(max_bytes, 4));
}

// The reproducible mode's tiles through the copy pipeline (16-byte rows,
// tiles of 64 rows and more on average), else the per-thread tile kernel;
// tile=3 forces the pipeline where rows allow it, tile=1 the per-thread
// kernel. One column a thread in the pipeline unless cols=2; 3 stages unless
// depth=4. On the H200, bf16, 3072 columns, 32 gates
// (bench/results/split/repro-tiles/): 1.17x and 1.10x the cuda backward at
// 32768 and 131072 rows, against 1.23x and 1.17x at 4 stages and 1.39x and
// 1.38x for per-thread tiles in the same run.
bool binned_piped(const gatecheck_problem& p, int max_bytes, int tile_choice) {
  if (max_bytes != 16 || tile_choice == 1) return false;
  return tile_choice == 3 || p.rows / std::max<int64_t>(p.gates, 1) >= 64;
}

template <class T>
cudaError_t launch_bwd(const gatecheck_problem& p, const void* grad_out, const void* gate,
                       int64_t gate_stride, const int64_t* index, const void* y, void* grad_res, void* grad_gate,
                       void* grad_y, Workspace& w, cudaStream_t s, const BinnedOut* binned = nullptr) {
  BwdLayout L;
  cudaError_t e = cached_layout(p, w, &L);
  if (e != cudaSuccess) return e;
  // The reproducible mode's tile states (by partial slot) lie past the plan's scratch.
  const size_t tile_states_at = align_up(L.total);
  const size_t blob_bytes =
      binned ? tile_states_at + size_t(L.slot_bound) * size_t(p.dim) * kBinnedWords * sizeof(uint64_t) : L.total;
  e = reserve_blob(w, blob_bytes, s);
  if (e != cudaSuccess) return e;
  // The blob starts with counters (the CUB path's per-gate counts, the fused
  // path's tile counts); the first w.zeroed_counts of them are known to be
  // zero. This call's other scratch lies past its own counters, where a call
  // with more counters keeps its zeros, so only this call's stay known (the
  // CUB and fused paths raise it again).
  w.zeroed_counts = std::min<int64_t>(w.zeroed_counts, L.counter_slots);
  char* base = static_cast<char*>(w.blob);
  auto* order = reinterpret_cast<int64_t*>(base + L.order);
  auto* plan = reinterpret_cast<PlanCount*>(base + L.plan);
  auto* tiles = reinterpret_cast<TileDesc*>(base + L.tiles);
  auto* folds = reinterpret_cast<FoldDesc*>(base + L.folds);
  auto* partials = reinterpret_cast<float*>(base + L.partials);

  const auto* status = static_cast<const unsigned long long*>(w.status);
  const int plan_choice = gate_residual_cuda_tuning().bwd_plan;
  const int tile_choice = gate_residual_cuda_tuning().bwd_tile;
  const int elem = int(sizeof(T));
  const int max_bytes = std::min(vector_bytes(elem, p.dim, {grad_out, gate, y, grad_res, grad_gate, grad_y}, 0),
                                 vector_bytes(elem, gate_stride, {gate}, 0));
  // The reproducible mode's grad_gate (binned->grad_gate: the caller passes
  // grad_gate null) is written an element at a time, so the vector widths
  // above leave it out.
  BwdArgs<T> a{static_cast<const T*>(grad_out),
               static_cast<const T*>(gate),
               static_cast<const T*>(y),
               static_cast<T*>(grad_res),
               static_cast<T*>(binned ? binned->grad_gate : grad_gate),
               static_cast<T*>(grad_y),
               order,
               tiles,
               plan + p.gates,
               partials,
               p.dim,
               gate_stride,
               w.status,
               w.epoch,
               binned ? reinterpret_cast<uint64_t*>(base + tile_states_at) : nullptr,
               binned ? binned->state : nullptr};
  // Both folds' plan and failure report (gates of several tiles, FoldDesc).
  const FoldPlan fold_plan{folds, plan + p.gates, p.dim, w.status, w.epoch, index, p.gates, w.report_dev};
  // Short problems with few gates: one kernel, no plan in memory, up to
  // kFusedAutoMaxRows rows where its grid takes at most kFusedMaxWaves waves
  // of resident blocks (blocks past the last tile, the last in the grid, only
  // scan the index). H200 4097x5376x9, 525 blocks for 396 slots: 104.3 us
  // against 112.2 for the counting plan and the copy pipeline
  // (docs/kernel-design.md; before the store fix it lost, 121.2 against
  // 119.6). plan=3 forces it where it applies.
  if (!binned && fused_applies(p, max_bytes) && (plan_choice == 3 || (plan_choice == 0 && tile_choice == 0))) {
    bool launched = false;
    dispatch_row_bytes(fused_row_bytes(p, elem, w.sm_count), [&](auto rb) { dispatch_fused_shape([&](auto threads, auto cols) {
      constexpr int RB = decltype(rb)::value, kThreads = decltype(threads)::value;
      constexpr auto kernel = bwd_fused_kernel<T, RB, kThreads, decltype(cols)::value>;
      const int smem = fused_smem_bytes(RB, p.rows);
      const dim3 grid(unsigned(std::min<int64_t>(pipe_chunks(p.dim, elem, RB), int64_t(1) << 30)), unsigned(L.tile_bound));
      if ((e = allow_pipe_smem<kernel>(fused_smem_bytes(RB, kFusedMaxRows))) != cudaSuccess) return;
      if (plan_choice != 3) {
        if (p.rows > kFusedAutoMaxRows) return;
        int per_sm = 0;
        if ((e = cuda_occupancy::resident_blocks_per_sm<kernel>(kThreads, size_t(smem), &per_sm)) != cudaSuccess) return;
        if (int64_t(grid.x) * grid.y > kFusedMaxWaves * int64_t(per_sm) * w.sm_count) return;
      }
      auto* counters = reinterpret_cast<unsigned long long*>(base + L.counts);
      if ((e = zero_counters(w, counters, fused_counters(p), s)) != cudaSuccess) return;
      const FusedPlan f{index,    p.rows, p.gates, w.status, counters, fused_gid_offset(RB, p.rows),
                        gate_residual_cuda_tuning().stop_after_plan, w.report_dev};
      // The first kernel of the call, launched with PDL all the same: it waits
      // for the previous kernel before it reads anything, so only its launch
      // overlaps. Optionally in clusters along the column chunks (tuning).
      launch_after_in_clusters(kernel, grid, dim3(kThreads), size_t(smem), s,
                               unsigned(gate_residual_cuda_tuning().fused_cluster), a, f);
      e = cudaGetLastError();
      launched = true;  // every used counter is back to zero after it
    }); });
    if (e != cudaSuccess || launched) return e;
  }
  const bool device_wide = plan_choice == 1 || gate_residual_cuda_tuning().device_wide_plan;
  const bool counting = L.chunks > 0 && !device_wide;
  // 16 warps where they fit, unless the tuning asks for 8 (to time the two)
  const int warps = gate_residual_cuda_tuning().plan_warps == 8 ? 8 : small_plan_warps(p.rows, p.gates);
  const bool one_block_auto = warps == 16 || p.rows <= kSmallPlanNarrowAutoRows;
  if (!device_wide && p.rows <= kSmallPlanRows && p.gates <= kSmallPlanGates && (one_block_auto || plan_choice == 2)) {
    // The first kernel of the call: a plain launch (see check_index_kernel).
    auto one_block = [&](auto width) {
      constexpr int W = decltype(width)::value;
      constexpr auto kernel = plan_small_kernel<W>;
      if ((e = allow_pipe_smem<kernel>(kSmallPlanSmemBudget)) != cudaSuccess) return;
      kernel<<<1, W * 32, size_t(small_plan_smem_at(W, p.rows, p.gates)), s>>>(index, p.rows, p.gates, plan, tiles,
                                                                              folds, order, w.status, w.epoch);
      e = cudaGetLastError();
    };
    if (warps == 16) one_block(std::integral_constant<int, 16>{});
    else one_block(std::integral_constant<int, 8>{});
    if (e != cudaSuccess) return e;
  } else if (counting) {
    auto* hist = reinterpret_cast<unsigned*>(base + L.hist);
    plan_count_kernel<<<unsigned(L.chunks), kSortThreads, 0, s>>>(index, p.rows, p.gates, w.status, w.epoch,
                                                                   hist, L.chunks);
    using Sort = cub::BlockRadixSort<unsigned, kSortThreads, kSortItems, int>;
    launch_after(plan_scatter_kernel<Sort>, dim3(unsigned(L.chunks)), dim3(kSortThreads), 0, s, index, p.rows,
                 p.gates, L.chunk_bits, static_cast<const unsigned*>(hist), L.chunks, plan, tiles, folds, order,
                 status, w.epoch);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
  } else {
    e = cub_plan(p, L, base, index, status, w, s);
    if (e != cudaSuccess) return e;
  }
  if (gate_residual_cuda_tuning().stop_after_plan) return cudaSuccess;

  const int bytes = bwd_width(elem, p, max_bytes, w.sm_count);
  if (binned) {  // the plan's tiles, binned sums, and their fold per gate
    if (binned_piped(p, max_bytes, tile_choice)) {
      dispatch_row_bytes(512, [&](auto rb) {
        constexpr int RB = decltype(rb)::value;
        auto go = [&](auto cols, auto depth) {
          constexpr int kDepth = decltype(depth)::value;
          constexpr auto kernel = bwd_pipe_binned_kernel<T, RB, decltype(cols)::value, kDepth>;
          const dim3 grid(unsigned(L.tile_bound), unsigned(std::min<int64_t>(pipe_chunks(p.dim, elem, RB), 65535)));
          if ((e = allow_pipe_smem<kernel>(pipe_smem_bytes(RB, kDepth))) != cudaSuccess) return;
          launch_after(kernel, grid, dim3(kPipeThreads), size_t(pipe_smem_bytes(RB, kDepth)), s, a);
        };
        auto with_depth = [&](auto cols) {
          // 3 stages (48 KiB at 512 B: four blocks an SM) unless the tuning asks for 4
          if (gate_residual_cuda_tuning().binned_pipe_depth == 4) go(cols, std::integral_constant<int, 4>{});
          else go(cols, std::integral_constant<int, 3>{});
        };
        if (gate_residual_cuda_tuning().pipe_cols == 2) with_depth(std::integral_constant<int, 2>{});
        else with_depth(std::integral_constant<int, 1>{});
      });
      if (e != cudaSuccess) return e;
    } else {
      dispatch_width<T>(binned_width<T>(max_bytes),
                        [&](auto n) { launch_binned_tiles<T, decltype(n)::value>(p, a, L.tile_bound, s); });
    }
    const BinnedFoldArgs<T> f{fold_plan, a.tile_states, binned->state, static_cast<T*>(binned->grad_gate)};
    const int ft = threads_for(p.dim);
    launch_after(fold_kernel<BinnedFoldArgs<T>>, dim3(unsigned(std::max<int64_t>(L.multi_bound, 1)), grid_y_for(p.dim, ft)),
                 dim3(ft), 0, s, f);
    return cudaGetLastError();
  }
  // Long tiles (few gates) on a short problem: the copy pipeline where rows
  // are 16-byte aligned, else staged through registers. Otherwise one thread
  // per column vector, which keeps enough threads busy; more rows in flight
  // per thread only where tiles are long (H200: U=8 at 16 B cost 25% with
  // 3-row tiles).
  const bool long_tiles = p.rows / std::max<int64_t>(p.gates, 1) >= kGradGateTileRows;
  // Little's law: the per-thread kernel keeps about tiles x dim x 2 tensors x
  // U rows of bytes in flight; below ~6 MB (4.2 TB/s x ~1.5 us) it cannot
  // reach bandwidth and the staged kernel wins. H200 (docs/kernel-design.md):
  // 4097x3072, 9 gates (4.9 MB): backward 70.8 us staged vs 77.1 per-thread;
  // 32 gates (4.7 MB): 77.6 vs 77.0, even; 32768x3072, 9 gates (13.5 MB):
  // 320 vs 247 us. The copy pipeline (16-byte rows) beats both up to about
  // 10 MB (forward+backward: 81.5 against 91.3 staged at 4097x3072x4,
  // 3.9 MB; 119.6 against 130.0 per-thread at 4097x5376x9, 8.6 MB; but 404
  // against 392 per-thread at 32768x3072x9, 13.5 MB); 185.4 against
  // 206.8 per-thread at 8192x5376x32, 11 MB, so the bound is 12 MB. It also
  // beats per-thread tiles on shorter tiles, 64-128 rows a gate (99.7
  // against 103.2 us at 4097x5376x64, 112.3 against 131.4 at 8192x3072x64,
  // 179.3 against 183.7 at 8192x5376x64), though not on 3-row tiles (131
  // against 77 us at 4097x3072x1365).
  const double in_flight =
      double(L.tile_bound) * double(p.dim) * elem * 2.0 * (long_tiles ? rows_in_flight(bytes) : 4);
  const bool pipe_tiles = p.rows / std::max<int64_t>(p.gates, 1) >= 64;
  const bool piped = tile_choice == 3 || (tile_choice == 0 && pipe_tiles && in_flight < 12e6);
  const bool few_in_flight = tile_choice == 0 && long_tiles && in_flight < 6e6;
  if (piped && max_bytes == 16) {  // the copy pipeline, on the plan in memory
    dispatch_row_bytes(512, [&](auto rb) {
      constexpr int RB = decltype(rb)::value;
      const dim3 grid(unsigned(L.tile_bound), unsigned(std::min<int64_t>(pipe_chunks(p.dim, elem, RB), 65535)));
      if ((e = allow_pipe_smem<bwd_pipe_kernel<T, RB>>(pipe_smem_bytes(RB))) != cudaSuccess) return;
      launch_after(bwd_pipe_kernel<T, RB>, grid, dim3(kPipeThreads), size_t(pipe_smem_bytes(RB)), s, a);
    });
    if (e != cudaSuccess) return e;
  } else if (tile_choice == 2 || few_in_flight) {
    const int tuned = gate_residual_cuda_tuning().bwd_vector_bytes;
    const int staged_bytes = tuned ? std::max(elem, std::min(tuned, max_bytes)) : max_bytes;
    dispatch_width<T>(staged_bytes, [&](auto n) {
      constexpr int N = decltype(n)::value;
      const int64_t chunks = (p.dim + 32 * N - 1) / (32 * N);
      const dim3 grid(unsigned(L.tile_bound), unsigned(std::min<int64_t>(chunks, 65535)));
      launch_after(bwd_staged_kernel<T, N>, grid, dim3(kStageWarps * 32), 0, s, a);
    });
  } else if (tile_choice == 4 || (tile_choice == 0 && short_tiles(p))) {  // kShortTilesPerBlock tiles a block
    dispatch_width<T>(bytes, [&](auto n) {
      constexpr int N = decltype(n)::value;
      const int64_t vecs = p.dim / N;
      const int threads = threads_for(vecs);
      const dim3 grid(unsigned((L.tile_bound + kShortTilesPerBlock - 1) / kShortTilesPerBlock), grid_y_for(vecs, threads));
      launch_after(bwd_short_tiles_kernel<T, N, kShortTilesPerBlock, 4>, grid, dim3(threads), 0, s, a);
    });
  } else {
    dispatch_width<T>(bytes, [&](auto n) {
      constexpr int N = decltype(n)::value;
      constexpr int U = rows_in_flight(N * int(sizeof(T)));
      const int64_t vecs = p.dim / N;
      const int threads = threads_for(vecs);
      const dim3 grid(unsigned(L.tile_bound), grid_y_for(vecs, threads));
      if (long_tiles) launch_after(bwd_tile_kernel<T, N, U>, grid, dim3(threads), 0, s, a);
      else if constexpr (GATECHECK_TILE_MAXNREG > 0 && N * sizeof(T) == 16)
        launch_after(bwd_tile_capped_kernel<T, N, 4>, grid, dim3(threads), 0, s, a);
      else launch_after(bwd_tile_kernel<T, N, 4>, grid, dim3(threads), 0, s, a);
    });
  }
  const FoldArgs<T> f{fold_plan, partials, static_cast<T*>(grad_gate)};
  const int ft = threads_for(p.dim);
  launch_after(fold_kernel<FoldArgs<T>>, dim3(unsigned(L.multi_bound), grid_y_for(p.dim, ft)), dim3(ft), 0, s, f);
  return cudaGetLastError();
}

}  // namespace

Status gate_residual_fwd_cuda(const gatecheck_problem& p, const void* res, const void* gate,
                              const int64_t* index, const void* y, void* out) {
  return gate_residual_fwd_cuda_strided(p, res, gate, p.dim, index, y, out);
}

Status gate_residual_fwd_cuda_strided(const gatecheck_problem& p, const void* res, const void* gate,
                                      int64_t gate_row_stride, const int64_t* index, const void* y,
                                      void* out) {
  const char* op = "gate_residual_fwd";
  Status st;
  Workspace* w = begin_cuda_call(op, p, check_fwd_args(p, res, gate, index, y, out, kCudaDevices,
                                                       /*index_on_host=*/false),
                                 gate, gate_row_stride, &st);
  if (!w) return st;
  const auto s = static_cast<cudaStream_t>(p.stream);
  cudaError_t e = cudaSuccess;
  if (p.rows == 0) return Status::success();
  check_index_kernel<<<grid_1d(p.rows, 256), 256, 0, s>>>(index, p.rows, p.gates, w->status, w->epoch);
  if (p.dim > 0) {
    dispatch_dtype(DType(p.dtype), [&](auto tag) {
      e = launch_fwd<decltype(tag)>(p, res, gate, gate_row_stride, index, y, out, *w, s);
    });
  } else {
    e = cudaGetLastError();
  }
  return cuda_error_status(op, " in launch", e);
}

Status gate_residual_bwd_cuda(const gatecheck_problem& p, const void* grad_out, const void* gate,
                              const int64_t* index, const void* y, void* grad_res,
                              void* grad_gate, void* grad_y) {
  return gate_residual_bwd_cuda_strided(p, grad_out, gate, p.dim, index, y, grad_res, grad_gate, grad_y);
}

namespace {
// The backward; grad_res null: not written (the contract's check of grad_res
// is then made on grad_out, whose shape it would have). `binned`: the
// reproducible mode, whose grad_gate (and/or state) comes from binned sums;
// with grad_y null too (a partial: binned->state only), gate is not read.
Status bwd_cuda(const gatecheck_problem& p, const void* grad_out, const void* gate, int64_t gate_row_stride,
                const int64_t* index, const void* y, void* grad_res, void* grad_gate, void* grad_y, bool skip_grad_res,
                const BinnedOut* binned = nullptr) {
  const char* op = "gate_residual_bwd";
  const bool partial_only = binned && !grad_y;
  Status checked;
  if (partial_only) {  // grad_out, y and the index; the state (the caller's) is checked by the caller
    checked = check_tensor(op, p, TensorArg{"grad_out", grad_out, DType(p.dtype), p.rows, p.dim, p.dim}, p.rows, p.dim);
    if (checked.ok()) checked = check_tensor(op, p, TensorArg{"y", y, DType(p.dtype), p.rows, p.dim, p.dim}, p.rows, p.dim);
    if (checked.ok()) checked = check_index_pointer(op, p, index);
  } else {
    checked = check_bwd_args(p, grad_out, gate, index, y, skip_grad_res ? grad_out : grad_res, grad_gate, grad_y,
                             kCudaDevices, /*index_on_host=*/false);
  }
  Status st;
  Workspace* w = begin_cuda_call(op, p, checked, gate, gate_row_stride, &st, partial_only);
  if (!w) return st;
  const auto s = static_cast<cudaStream_t>(p.stream);
  const size_t elem = p.dtype == GATECHECK_F32 ? 4 : 2;
  cudaError_t e = cudaSuccess;
  if (p.rows == 0) {  // every gate unused: grad_gate is +0 (all-zero bits in every dtype), the state empty (zeros)
    if (p.gates > 0 && p.dim > 0 && grad_gate) e = cudaMemsetAsync(grad_gate, 0, size_t(p.gates * p.dim) * elem, s);
    if (e == cudaSuccess && binned && binned->state && p.gates > 0 && p.dim > 0)
      e = cudaMemsetAsync(binned->state, 0, size_t(p.gates * p.dim) * kBinnedWords * sizeof(uint64_t), s);
    return cuda_error_status(op, " in memset", e);
  }
  if (p.dim == 0) {  // nothing to write, but a bad index is still reported
    check_index_kernel<<<grid_1d(p.rows, 256), 256, 0, s>>>(index, p.rows, p.gates, w->status, w->epoch);
    e = cudaGetLastError();
  } else {
    dispatch_dtype(DType(p.dtype), [&](auto tag) {
      e = launch_bwd<decltype(tag)>(p, grad_out, gate, gate_row_stride, index, y, skip_grad_res ? nullptr : grad_res,
                                    binned ? nullptr : grad_gate, grad_y, *w, s, binned);
    });
  }
  if (e == cudaErrorStreamCaptureUnsupported)  // reserve_blob, while capturing
    return capture_failure(op, "this backward needs more scratch than the stream has (its first backward this large)");
  return cuda_error_status(op, " in launch", e);
}
}  // namespace

Status gate_residual_bwd_cuda_binned(const gatecheck_problem& p, const void* grad_out, const void* gate,
                                     const int64_t* index, const void* y, void* grad_res, void* grad_gate,
                                     void* grad_y, uint64_t* state) {
  const BinnedOut out{state, grad_gate};
  return bwd_cuda(p, grad_out, gate, p.dim, index, y, grad_res, grad_gate, grad_y, false, &out);
}

Status gate_residual_binned_partial_cuda(const gatecheck_problem& p, const void* grad_out, const int64_t* index,
                                         const void* y, uint64_t* state) {
  if (!state && p.rows >= 0 && p.gates > 0 && p.dim > 0)
    return Status::error(ErrorKind::null_pointer, "gate_residual_bwd: the state is null");
  const BinnedOut out{state, nullptr};
  return bwd_cuda(p, grad_out, nullptr, p.dim, index, y, nullptr, nullptr, nullptr, true, &out);
}

Status gate_residual_bwd_cuda_strided(const gatecheck_problem& p, const void* grad_out, const void* gate,
                                      int64_t gate_row_stride, const int64_t* index, const void* y,
                                      void* grad_res, void* grad_gate, void* grad_y) {
  return bwd_cuda(p, grad_out, gate, gate_row_stride, index, y, grad_res, grad_gate, grad_y, false);
}

Status gate_residual_bwd_cuda_strided_no_grad_res(const gatecheck_problem& p, const void* grad_out,
                                                  const void* gate, int64_t gate_row_stride,
                                                  const int64_t* index, const void* y, void* grad_gate,
                                                  void* grad_y) {
  return bwd_cuda(p, grad_out, gate, gate_row_stride, index, y, nullptr, grad_gate, grad_y, true);
}

bool gate_residual_cuda_pipe_phases(double cycles_per_warp[kPipePhaseCount], unsigned long long* warps) {
#ifdef GATECHECK_PIPE_PHASES
  static_assert(kPipePhaseCount == kPhases, "one name per phase");
  unsigned long long c[kPhases] = {}, w = 0;
  if (cudaDeviceSynchronize() != cudaSuccess || cudaMemcpyFromSymbol(c, g_pipe_phase_cycles, sizeof c) != cudaSuccess ||
      cudaMemcpyFromSymbol(&w, g_pipe_phase_warps, sizeof w) != cudaSuccess)
    return false;
  const unsigned long long zero[kPhases + 1] = {};
  cudaMemcpyToSymbol(g_pipe_phase_cycles, zero, sizeof c);
  cudaMemcpyToSymbol(g_pipe_phase_warps, zero, sizeof w);
  for (int k = 0; k < kPhases; ++k) cycles_per_warp[k] = w ? double(c[k]) / double(w) : 0.0;
  *warps = w;
  return true;
#else
  (void)cycles_per_warp;
  (void)warps;
  return false;
#endif
}

Status gate_residual_cuda_release_stream(void* stream) {
  const cudaError_t e = release_workspace(static_cast<cudaStream_t>(stream));
  return cuda_error_status("gate_residual_cuda_release_stream", " in releasing the stream's workspace", e);
}

}  // namespace gatecheck
