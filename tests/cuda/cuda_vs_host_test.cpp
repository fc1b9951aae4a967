// cuda vs host: the CUDA kernels and their host twin agree bit for bit on every
// output, over dtypes, index patterns, odd dims, misaligned pointers, streams,
// and row counts around the grad_gate tile size (kGradGateTileRows = 256).
//
// Knobs: GATECHECK_SEED (default 20261129), GATECHECK_CUDA_CASES (default 400).
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <array>
#include <cstdlib>
#include <random>

#include "cuda_runs.h"
#include "kernels/cuda/gate_residual_cuda.h"
#include "device_buffers.h"
#include "tests/cuda_tuning_scope.h"
#include "tests/gpu.h"

namespace gatecheck {
namespace testing_cuda {
namespace {

uint64_t seed_from_env() {
  const char* s = std::getenv("GATECHECK_SEED");
  return s ? std::strtoull(s, nullptr, 10) : 20261129ull;
}
int cases_from_env() {
  const char* s = std::getenv("GATECHECK_CUDA_CASES");
  return s ? std::atoi(s) : 400;
}

// Rows straddling one tile (255/256/257), two tiles, and a few odd counts.
const int64_t kRows[] = {1, 2, 3, 17, 255, 256, 257, 511, 512, 513, 777, 1500};
// Dims straddling every vector width (2, 4, 8 elements) plus odd ones.
const int64_t kDims[] = {1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 33, 64, 100, 130, 256, 1000};
const DType kTypes[] = {DType::bf16, DType::f16, DType::f32};
const Pattern kPatterns[] = {Pattern::sorted, Pattern::random, Pattern::one_gate, Pattern::identity,
                             Pattern::unused_gates};

void expect_same(const RawCase& c, const CudaPlacement& where, const std::string& label) {
  const RawOutputs h = run_host(c);
  ASSERT_TRUE(h.fwd.ok() && h.bwd.ok()) << h.fwd.message << h.bwd.message;
  const RawOutputs d = run_cuda(c, where);
  ASSERT_TRUE(d.fwd.ok()) << label << ": " << d.fwd.message;
  ASSERT_TRUE(d.bwd.ok()) << label << ": " << d.bwd.message;
  const std::string diff = compare_outputs(c, d, h);
  EXPECT_TRUE(diff.empty()) << label << " (" << c.describe() << ")\n" << diff;
}

// One random case of the forced-path tests: rows from kRows, any dtype, dim
// and pattern, gates one of gates_for(rows) (a std::array), and in a third of
// the cases every tensor misaligned by zero or one element.
template <class GatesFor>
void expect_random_case(std::mt19937_64& rng, GatesFor gates_for, const std::string& label) {
  const int64_t rows = kRows[rng() % (sizeof(kRows) / sizeof(kRows[0]))];
  const auto gate_choices = gates_for(rows);
  const RawCase c = make_case(rng, kTypes[rng() % 3], rows, kDims[rng() % (sizeof(kDims) / sizeof(kDims[0]))],
                              gate_choices[rng() % gate_choices.size()], kPatterns[rng() % 5]);
  CudaPlacement where;
  if (rng() % 3 == 0)
    for (size_t& o : where.offset) o = (rng() % 2) * size_t(dtype_size(c.dtype));
  expect_same(c, where, label);
}

TEST(CudaVsHost, RandomCasesBitIdentical) {
  GATECHECK_REQUIRE_GPU();
  const uint64_t seed = seed_from_env();
  const int n = cases_from_env();
  std::printf("cuda vs host: seed %llu, %d cases (GATECHECK_SEED, GATECHECK_CUDA_CASES)\n",
              (unsigned long long)seed, n);
  std::mt19937_64 rng(seed);
  auto pick = [&](const auto& arr) { return arr[rng() % (sizeof(arr) / sizeof(arr[0]))]; };
  for (int i = 0; i < n; ++i) {
    const DType t = pick(kTypes);
    const int64_t rows = pick(kRows), dim = pick(kDims);
    const Pattern pat = pick(kPatterns);
    const int64_t gate_choices[] = {1, 2, 9, rows / 3 + 1, rows, 2 * rows + 1};
    const int64_t gates = pick(gate_choices);
    const RawCase c = make_case(rng, t, rows, dim, gates, pat);
    CudaPlacement where;
    where.own_stream = rng() % 2;
    if (rng() % 3 == 0)  // misalign some tensors by one element: forces the narrow path
      for (size_t& o : where.offset) o = (rng() % 2) * size_t(dtype_size(t));
    expect_same(c, where, "case " + std::to_string(i) + " seed " + std::to_string(seed));
    if (HasFailure()) return;  // the first counterexample is the useful one
  }
}

// The device-wide plan path (CUB scan + one thread per gate), normally taken
// above 2048 gates, forced on for the same random cases, and taken naturally.
TEST(CudaVsHost, DeviceWidePlanPathBitIdentical) {
  GATECHECK_REQUIRE_GPU();
  std::mt19937_64 rng(seed_from_env() + 4);
  const TuningScope tuning_back;
  gate_residual_cuda_tuning().device_wide_plan = true;
  for (int i = 0; i < 60 && !HasFailure(); ++i) {
    const int64_t rows = kRows[rng() % (sizeof(kRows) / sizeof(kRows[0]))];
    const int64_t gate_choices[] = {1, 9, rows / 3 + 1, 2 * rows + 1};
    const RawCase c = make_case(rng, kTypes[i % 3], rows, kDims[rng() % (sizeof(kDims) / sizeof(kDims[0]))],
                                gate_choices[rng() % 4], kPatterns[rng() % 5]);
    expect_same(c, {}, "forced device-wide plan, case " + std::to_string(i));
  }
  gate_residual_cuda_tuning().device_wide_plan = false;
  expect_same(make_case(rng, DType::bf16, 70000, 4, 70000, Pattern::identity), {}, "70000 gates (identity)");
  expect_same(make_case(rng, DType::f16, 1000, 3, 200000, Pattern::random), {}, "200000 gates, mostly unused");
}

// Every index-plan path (CUB sort, counting, the one-block plan under 8193
// rows) with every tile kernel (one thread per column, staged through
// registers, the copy pipeline), and the one-kernel backward, forced on for
// random cases whatever the automatic choice would be.
TEST(CudaVsHost, EveryPlanAndTileKernelBitIdentical) {
  GATECHECK_REQUIRE_GPU();
  std::mt19937_64 rng(seed_from_env() + 5);
  {  // the paths forced; the automatic choice again after the block
    const TuningScope tuning_back;
    // plan 3 (the one-kernel backward) takes no tile setting: with tile 0. The
    // copy pipeline (tile 3) and the one-kernel backward with both row segments
    // (512, 256 bytes); the one-kernel backward also with each block shape
    // (threads, columns summed per thread) and in clusters.
    struct Path { int plan, tile, seg, threads, cols, cluster; };
    const Path paths[] = {{1, 1, 0, 0, 0, 0},   {1, 2, 0, 0, 0, 0},   {1, 3, 0, 0, 0, 0},   {2, 1, 0, 0, 0, 0},
                          {2, 2, 0, 0, 0, 0},   {2, 3, 0, 0, 0, 0},   {2, 3, 256, 0, 0, 0}, {3, 0, 0, 0, 0, 0},
                          {3, 0, 256, 0, 0, 0}, {3, 0, 0, 512, 0, 0}, {3, 0, 0, 512, 1, 0}, {3, 0, 256, 512, 1, 0},
                          {3, 0, 0, 0, 1, 0},   {3, 0, 256, 0, 0, 2}, {1, 4, 0, 0, 0, 0},   {2, 4, 0, 0, 0, 0}};
    for (const auto& [plan, tile, seg, threads, cols, cluster] : paths) {
      gate_residual_cuda_tuning().bwd_plan = plan;
      gate_residual_cuda_tuning().bwd_tile = tile;
      gate_residual_cuda_tuning().pipe_row_bytes = seg;
      gate_residual_cuda_tuning().pipe_threads = threads;
      gate_residual_cuda_tuning().pipe_cols = cols;
      gate_residual_cuda_tuning().fused_cluster = cluster;
      const char* plans[] = {"", "CUB plan", "counting plan", "one-kernel backward"};
      const char* tiles[] = {"", ", per-thread tiles", ", staged tiles", ", pipelined tiles", ", short tiles"};
      const std::string label = std::string(plans[plan]) + tiles[tile] + (seg ? ", 256-byte segments" : "") +
                                (threads ? ", 512 threads" : "") + (cols ? ", one column per thread" : "") +
                                (cluster ? ", clusters of 2" : "");
      for (int i = 0; i < 50 && !HasFailure(); ++i)
        expect_random_case(
            rng, [](int64_t rows) { return std::array<int64_t, 5>{1, 2, 9, rows / 3 + 1, rows}; },
            label + ", case " + std::to_string(i));
      // Row chunks of the counting path (4096 rows): boundaries, many chunks.
      expect_same(make_case(rng, DType::bf16, 4097, 40, 9, Pattern::random), {}, label + ", 4097 rows");
      expect_same(make_case(rng, DType::f32, 8192, 12, 3, Pattern::sorted), {}, label + ", 8192 rows");
      expect_same(make_case(rng, DType::f16, 40000, 8, 700, Pattern::random), {}, label + ", 40000 rows, 700 gates");
    }
  }
  // Where the counting path's histogram bound sends the automatic choice to CUB.
  expect_same(make_case(rng, DType::bf16, 300000, 2, 2048, Pattern::random), {}, "300000 rows, 2048 gates");
}

// Every forward block shape (rows per block), forced on for random cases.
TEST(CudaVsHost, EveryForwardShapeBitIdentical) {
  GATECHECK_REQUIRE_GPU();
  std::mt19937_64 rng(seed_from_env() + 6);
  const TuningScope tuning_back;
  for (int rows_per_block : {1, 2, 4}) {
    gate_residual_cuda_tuning().fwd_rows = rows_per_block;
    const std::string label = "forward " + std::to_string(rows_per_block) + " rows a block";
    for (int i = 0; i < 60 && !HasFailure(); ++i)
      expect_random_case(
          rng, [](int64_t rows) { return std::array<int64_t, 3>{1, 9, rows / 3 + 1}; },
          label + ", case " + std::to_string(i));
    expect_same(make_case(rng, DType::bf16, 4097, 3072, 9, Pattern::random), {}, label + ", 4097 x 3072");
  }
}

// The two plan paths share one workspace: a counting-path call with few gates
// writes its scratch where a CUB-path call with many gates keeps its zeroed
// counters. (Found on the H200: without the fix the third call read dirty
// counts, mapped rows to the wrong gates and read out of bounds.) The CUB
// path needs more than 8192 gates or rows since the one-block plan takes up
// to 8192 of each.
TEST(CudaVsHost, PlanPathsTakeTurnsOnOneWorkspace) {
  GATECHECK_REQUIRE_GPU();
  std::mt19937_64 rng(seed_from_env() + 6);
  expect_same(make_case(rng, DType::bf16, 1000, 4, 9001, Pattern::random), {}, "CUB path, 9001 gates");
  expect_same(make_case(rng, DType::bf16, 1000, 4, 9, Pattern::random), {}, "counting path, 9 gates");
  expect_same(make_case(rng, DType::bf16, 1000, 4, 9001, Pattern::random), {}, "CUB path again, 9001 gates");
  expect_same(make_case(rng, DType::bf16, 1000, 4, 3001, Pattern::random), {}, "one-block plan, 3001 gates");
  expect_same(make_case(rng, DType::bf16, 1000, 4, 9001, Pattern::random), {}, "CUB path after it");
}

// The one-block plan past 2048 gates (up to 8192 rows and 8192 gates; 16
// warps where their shared memory fits, up to 5973 gates at 4097 rows and 5518
// at 8192, else 8), at both widths' limits, with one gate per row, gates with
// several tiles among thousands, and just past each limit (the CUB path). The
// automatic choice takes the 8-warp plan up to 6144 rows only; forcing the
// counting plan (plan=2) takes it up to 8192, and plan_warps=8 forces 8 warps.
TEST(CudaVsHost, OneBlockPlanTakesUpTo8192Gates) {
  GATECHECK_REQUIRE_GPU();
  std::mt19937_64 rng(seed_from_env() + 9);
  struct Shape { DType t; int64_t rows, dim, gates; Pattern pat; };
  const Shape shapes[] = {
      {DType::bf16, 2049, 8, 2049, Pattern::identity},  {DType::f16, 4097, 9, 4096, Pattern::random},
      {DType::f32, 4097, 3, 4097, Pattern::identity},   {DType::bf16, 8192, 5, 8192, Pattern::identity},
      {DType::bf16, 8192, 16, 8192, Pattern::random},   {DType::f16, 8192, 4, 5000, Pattern::sorted},
      {DType::f32, 8192, 7, 8192, Pattern::one_gate},   {DType::bf16, 8192, 33, 6000, Pattern::unused_gates},
      {DType::f16, 3000, 17, 8192, Pattern::random},    {DType::f16, 6144, 6, 8192, Pattern::identity},
      {DType::bf16, 6145, 6, 6145, Pattern::random},    {DType::bf16, 8193, 4, 3000, Pattern::random},
      {DType::f16, 100, 4, 8193, Pattern::random},      {DType::bf16, 4097, 5, 5973, Pattern::random},
      {DType::f16, 4097, 6, 5974, Pattern::random},     {DType::bf16, 8192, 3, 5518, Pattern::random},
      {DType::f32, 8192, 5, 5519, Pattern::sorted},     {DType::bf16, 8192, 9, 5518, Pattern::one_gate}};
  struct Config { int plan, warps; const char* label; };
  const TuningScope tuning_back;
  for (const auto& [plan, warps, label] : {Config{0, 0, ""}, Config{2, 0, "counting plan forced, "},
                                           Config{2, 8, "counting plan and 8 warps forced, "}}) {
    gate_residual_cuda_tuning().bwd_plan = plan;
    gate_residual_cuda_tuning().plan_warps = warps;
    for (const auto& [t, rows, dim, gates, pat] : shapes)
      expect_same(make_case(rng, t, rows, dim, gates, pat), {},
                  label + std::to_string(rows) + " rows, " + std::to_string(gates) + " gates, " + pattern_name(pat));
  }
}

// The one-kernel backward: many tiles per gate in several column chunks (the
// last tile of each (gate, chunk) folds), at its row and gate limits, and
// taking turns on one workspace with the other paths, whose scratch overlaps
// its tile counters (each call must find them zero).
TEST(CudaVsHost, OneKernelBackwardFoldsAndSharesTheWorkspace) {
  GATECHECK_REQUIRE_GPU();
  std::mt19937_64 rng(seed_from_env() + 7);
  // plan=3: the one-kernel backward wherever it applies (the automatic choice
  // takes it only up to 6144 rows); past its limits the call falls back.
  auto one_kernel = [&](const RawCase& c, const std::string& label) {
    const TuningScope tuning_back;
    gate_residual_cuda_tuning().bwd_plan = 3;
    expect_same(c, {}, label);
  };
  one_kernel(make_case(rng, DType::bf16, 8192, 1000, 3, Pattern::random), "8192 rows, 4 chunks, 11 tiles per gate");
  one_kernel(make_case(rng, DType::f32, 8192, 1000, 64, Pattern::sorted), "64 gates, 8 chunks");
  one_kernel(make_case(rng, DType::f16, 8193, 1000, 3, Pattern::random), "8193 rows: past the limit");
  one_kernel(make_case(rng, DType::f16, 600, 1000, 65, Pattern::random), "65 gates: past the limit");
  expect_same(make_case(rng, DType::bf16, 1000, 4, 9001, Pattern::random), {}, "CUB path, 9001 gates");
  one_kernel(make_case(rng, DType::bf16, 8192, 1000, 3, Pattern::random), "one kernel after CUB");
  expect_same(make_case(rng, DType::bf16, 1000, 4, 9, Pattern::random), {}, "counting path, 9 gates");
  one_kernel(make_case(rng, DType::f32, 8192, 1000, 64, Pattern::one_gate), "one kernel after counting");
  one_kernel(make_case(rng, DType::f32, 8192, 1000, 64, Pattern::one_gate), "and again");
  expect_same(make_case(rng, DType::bf16, 6144, 1000, 9, Pattern::random), {}, "6144 rows: the automatic choice's one kernel");
  expect_same(make_case(rng, DType::bf16, 6145, 1000, 9, Pattern::random), {}, "6145 rows: the automatic choice's counting plan");
}

// Long segments: many tiles per gate, so the fold of tile partials is exercised.
TEST(CudaVsHost, LongSegmentsFoldTilesInOrder) {
  GATECHECK_REQUIRE_GPU();
  std::mt19937_64 rng(seed_from_env() + 1);
  expect_same(make_case(rng, DType::bf16, 70000, 24, 3, Pattern::random), {}, "70000 rows, 3 gates");
  expect_same(make_case(rng, DType::f16, 5000, 40, 1, Pattern::one_gate), {}, "5000 rows, 1 gate");
  expect_same(make_case(rng, DType::f32, 20000, 8, 20000, Pattern::identity), {}, "identity");
}

// The benchmark's regime: 9 gates over many rows of a wide dim, sorted and random.
TEST(CudaVsHost, BenchmarkShapeBitIdentical) {
  GATECHECK_REQUIRE_GPU();
  std::mt19937_64 rng(seed_from_env() + 2);
  expect_same(make_case(rng, DType::bf16, 4097, 3072, 9, Pattern::sorted), {}, "4097x3072 sorted");
  expect_same(make_case(rng, DType::f16, 4097, 5376, 1365, Pattern::random), {}, "4097x5376 random");
}

// Two runs of the backward give identical grad_gate bits (no atomics, fixed order).
TEST(CudaVsHost, BackwardRepeatable) {
  GATECHECK_REQUIRE_GPU();
  std::mt19937_64 rng(seed_from_env() + 3);
  const RawCase c = make_case(rng, DType::bf16, 9000, 520, 9, Pattern::random);
  const RawOutputs a = run_cuda(c, {}), b = run_cuda(c, {});
  ASSERT_TRUE(a.bwd.ok() && b.bwd.ok());
  EXPECT_EQ(compare_bits("grad_gate", a.grad_gate, b.grad_gate, c.dim), "");
}

// The hot path neither synchronises the host nor allocates synchronously: after
// a first call on a stream (which sizes its workspace), the forward and the
// backward are captured into a CUDA graph in global capture mode, where either
// would fail the capture, and the graph, launched twice, gives the host twin's
// bits. Every backward plan forced in turn, on shapes where the automatic
// choice differs: few long gates, thousands of gates, about one gate per row.
TEST(CudaVsHost, CapturedInACudaGraphAfterAFirstCall) {
  GATECHECK_REQUIRE_GPU();
  std::mt19937_64 rng(seed_from_env() + 13);
  struct Shape { DType t; int64_t rows, dim, gates; Pattern pat; };
  const Shape shapes[] = {{DType::bf16, 4097, 256, 9, Pattern::random},
                          {DType::f16, 3000, 72, 3000, Pattern::random},
                          {DType::f32, 20000, 40, 9, Pattern::sorted},
                          {DType::bf16, 20000, 24, 20000, Pattern::random}};
  CudaPlacement where;
  where.own_stream = true;
  where.capture_graph = true;
  const TuningScope tuning_back;
  for (const int plan : {0, 1, 2, 3}) {
    gate_residual_cuda_tuning().bwd_plan = plan;
    for (const auto& [t, rows, dim, gates, pat] : shapes)
      expect_same(make_case(rng, t, rows, dim, gates, pat), where,
                  "plan=" + std::to_string(plan) + ", " + std::to_string(rows) + " rows, " + std::to_string(gates) +
                      " gates, graph");
  }
}

// The capture check can fail: a stream's first call allocates its state
// (cudaMalloc, a clear, pinned memory: the cold path), which global capture
// mode refuses, so capturing a first call must fail, and say why.
TEST(CudaVsHost, CaptureOfAFirstCallFails) {
  GATECHECK_REQUIRE_GPU();
  std::mt19937_64 rng(seed_from_env() + 14);
  CudaPlacement where;
  where.own_stream = true;
  where.capture_graph = true;
  where.warm_up = false;
  const RawOutputs d = run_cuda(make_case(rng, DType::bf16, 300, 16, 4, Pattern::random), where);
  EXPECT_FALSE(d.fwd.ok());
  EXPECT_NE(d.fwd.message.find("CUDA graph: the forward, captured: gate_residual_fwd: the stream is being captured "
                               "into a CUDA graph and this is the first call on the stream"),
            std::string::npos)
      << d.fwd.message;
}

// A backward that needs more scratch than its stream has (a larger problem
// than any before on it) is refused while the stream is captured, and says
// why: an allocation made in the graph would be freed and made again at each
// launch, under the workspace that keeps it. The same backward, after a
// plain call of its size, is captured.
TEST(CudaVsHost, CaptureOfALargerBackwardFails) {
  GATECHECK_REQUIRE_GPU();
  std::mt19937_64 rng(seed_from_env() + 15);
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  CudaPlacement where;
  where.stream = s;
  const RawCase small = make_case(rng, DType::bf16, 300, 16, 4, Pattern::random);
  const RawCase large = make_case(rng, DType::bf16, 40000, 16, 3000, Pattern::random);  // the CUB plan's scratch
  EXPECT_EQ(compare_outputs(small, run_cuda(small, where), run_host(small)), "");
  where.capture_graph = true;
  where.warm_up = false;
  const RawOutputs d = run_cuda(large, where);
  EXPECT_NE(d.bwd.message.find("CUDA graph: the backward, captured: gate_residual_bwd: the stream is being captured "
                               "into a CUDA graph and this backward needs more scratch"),
            std::string::npos)
      << d.bwd.message;
  where.warm_up = true;
  const RawOutputs ok = run_cuda(large, where);
  EXPECT_TRUE(ok.fwd.ok() && ok.bwd.ok()) << ok.fwd.message << ok.bwd.message;
  EXPECT_EQ(compare_outputs(large, ok, run_host(large)), "");
  EXPECT_TRUE(gate_residual_cuda_release_stream(s).ok());
  cudaStreamDestroy(s);
}

// The comparator itself must fail on a one-bit difference and on +0 vs -0.
TEST(CudaVsHost, ComparatorCatchesOneBitAndSignedZero) {
  std::vector<uint32_t> a = {0x0000, 0x3f80}, b = a;
  EXPECT_EQ(compare_bits("t", a, b, 2), "");
  b[0] = 0x8000;  // -0 in bf16
  EXPECT_NE(compare_bits("t", a, b, 2).find("first at [0, 0]"), std::string::npos);
  b = a;
  b[1] ^= 1;
  EXPECT_NE(compare_bits("t", a, b, 2).find("1 of 2 elements differ"), std::string::npos);
}

}  // namespace
}  // namespace testing_cuda
}  // namespace gatecheck
