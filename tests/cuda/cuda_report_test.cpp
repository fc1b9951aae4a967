// Index errors without a host sync: the report a failed call leaves in pinned
// host memory (gate_residual_cuda_take_report, ..._wait_and_take_reports), on
// the forward and on every backward plan, the first report kept until taken,
// and in a CUDA graph, whose epochs are fixed at capture: a launch with a bad
// index reports even after a later plain call's failure, and launches after
// the report is taken compute again.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <random>

#include "cuda_runs.h"
#include "device_buffers.h"
#include "kernels/cuda/gate_residual_cuda.h"
#include "tests/cuda_tuning_scope.h"
#include "tests/gpu.h"

namespace gatecheck {
namespace testing_cuda {
namespace {

const char* kOp = "test";

// Reports that earlier tests of this process left untaken (on the default
// stream, say, which is never released), taken first, so that each test here
// sees only its own: ctest runs a test a process, the binary run whole does
// not, and gate_residual_cuda_wait_and_take_reports returns the first report
// of any stream.
void take_earlier_reports() { (void)gate_residual_cuda_wait_and_take_reports(kOp); }

// One problem's device buffers on a stream of its own, called through the raw API.
struct Call {
  RawCase c;
  cudaStream_t s = nullptr;
  size_t nb, gb;
  DeviceBuffer res, gate, y, out, g, grad_res, grad_gate, grad_y, index;
  explicit Call(RawCase rc)
      : c(std::move(rc)),
        nb(size_t(c.rows * c.dim) * size_t(dtype_size(c.dtype))),
        gb(size_t(c.gates * c.dim) * size_t(dtype_size(c.dtype))),
        res(nb), gate(gb), y(nb), out(nb), g(nb), grad_res(nb), grad_gate(gb), grad_y(nb), index(size_t(c.rows) * 8) {
    EXPECT_EQ(cudaStreamCreate(&s), cudaSuccess);
    res.upload(to_storage(c.dtype, c.res).data());
    gate.upload(to_storage(c.dtype, c.gate).data());
    y.upload(to_storage(c.dtype, c.y).data());
    g.upload(to_storage(c.dtype, c.grad_out).data());
    set_index(c.index);
  }
  ~Call() {
    gate_residual_cuda_release_stream(s);
    cudaStreamDestroy(s);
  }
  void set_index(const std::vector<int64_t>& idx) {
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    index.upload(idx.data());
  }
  gatecheck_problem p() const { return {c.rows, c.dim, c.gates, int32_t(c.dtype), GATECHECK_CUDA, s}; }
  const int64_t* idx() const { return static_cast<const int64_t*>(index.get()); }
  Status fwd() { return gate_residual_fwd_cuda(p(), res.get(), gate.get(), idx(), y.get(), out.get()); }
  Status bwd() {
    return gate_residual_bwd_cuda(p(), g.get(), gate.get(), idx(), y.get(), grad_res.get(), grad_gate.get(),
                                  grad_y.get());
  }
  void poison() {
    for (DeviceBuffer* b : {&out, &grad_res, &grad_gate, &grad_y}) b->fill(0xa5);
  }
  RawOutputs outputs() const {
    RawOutputs o;
    std::vector<uint8_t> h(nb), hg(gb);
    out.download(h.data());
    o.out = from_storage(c.dtype, h);
    grad_res.download(h.data());
    o.grad_res = from_storage(c.dtype, h);
    grad_y.download(h.data());
    o.grad_y = from_storage(c.dtype, h);
    grad_gate.download(hg.data());
    o.grad_gate = from_storage(c.dtype, hg);
    return o;
  }
  Status take() { return gate_residual_cuda_take_report(kOp, s); }
};

void expect_report(const Status& st, int64_t row, int64_t value, int64_t gates, const char* by) {
  EXPECT_EQ(st.kind, ErrorKind::index_out_of_range) << st.message;
  EXPECT_NE(st.message.find("index[" + std::to_string(row) + "] = " + std::to_string(value) + " is out of range [0, " +
                            std::to_string(gates) + ")"),
            std::string::npos)
      << st.message;
  EXPECT_NE(st.message.find(std::string("by an earlier ") + by), std::string::npos) << st.message;
}

// The forward, and the backward on every plan (the one-kernel backward, the
// one-block plan, the counting plan, the CUB plan): the report names the first
// bad row and its value once the call has finished, without the sync helper;
// taken once, it is gone.
TEST(CudaReports, EveryPathReportsTheFirstBadRowWithoutASync) {
  GATECHECK_REQUIRE_GPU();
  take_earlier_reports();
  const TuningScope tuning_back;
  std::mt19937_64 rng(41);
  for (const int plan : {0, 3, 2, 1}) {
    // 600 rows: plan 0 is the one-kernel backward; 7000 rows with 9 gates: the
    // one-block plan (plan 0) or the forced path.
    for (const int64_t rows : {int64_t(600), int64_t(7000)}) {
      SCOPED_TRACE("plan=" + std::to_string(plan) + " rows=" + std::to_string(rows));
      gate_residual_cuda_tuning().bwd_plan = plan;
      Call k(make_case(rng, DType::bf16, rows, 64, 9, Pattern::random));
      std::vector<int64_t> idx = k.c.index;
      idx[417] = 9;
      idx[530] = -5;
      k.set_index(idx);
      EXPECT_TRUE(k.take().ok()) << "a report before any bad call";
      ASSERT_TRUE(k.fwd().ok());
      ASSERT_EQ(cudaStreamSynchronize(k.s), cudaSuccess);  // the device is done: the report is there
      expect_report(k.take(), 417, 9, 9, "forward");
      EXPECT_TRUE(k.take().ok()) << "a report taken twice";
      ASSERT_TRUE(k.bwd().ok());
      ASSERT_EQ(cudaStreamSynchronize(k.s), cudaSuccess);
      expect_report(k.take(), 417, 9, 9, "backward");
      EXPECT_TRUE(k.take().ok());
    }
  }
}

// The first report stays until taken (a later failure does not replace it);
// the sync helper takes the report of the error it returns; the waiting form
// finds a report on any stream.
TEST(CudaReports, FirstReportStaysUntilTakenAndEachErrorIsReportedOnce) {
  GATECHECK_REQUIRE_GPU();
  take_earlier_reports();
  std::mt19937_64 rng(42);
  Call k(make_case(rng, DType::f16, 300, 16, 4, Pattern::random));
  std::vector<int64_t> idx = k.c.index;
  idx[3] = 4;
  k.set_index(idx);
  ASSERT_TRUE(k.fwd().ok());
  idx[3] = 0;
  idx[5] = -1;
  k.set_index(idx);
  ASSERT_TRUE(k.bwd().ok());
  ASSERT_EQ(cudaStreamSynchronize(k.s), cudaSuccess);
  expect_report(k.take(), 3, 4, 4, "forward");
  EXPECT_TRUE(k.take().ok()) << "the second failure filled a report that was still full";

  ASSERT_TRUE(k.fwd().ok());
  const Status synced = gate_residual_cuda_sync_status("sync", k.p(), k.idx());
  EXPECT_NE(synced.message.find("index[5] = -1"), std::string::npos) << synced.message;
  EXPECT_TRUE(k.take().ok()) << "an error returned by the sync helper was reported again";

  Call other(make_case(rng, DType::bf16, 50, 8, 3, Pattern::random));
  ASSERT_TRUE(other.fwd().ok());  // a good call on another stream
  ASSERT_TRUE(k.bwd().ok());      // a bad one here, not waited for
  expect_report(gate_residual_cuda_wait_and_take_reports(kOp), 5, -1, 4, "backward");
  EXPECT_TRUE(gate_residual_cuda_wait_and_take_reports(kOp).ok());
}

// Forward and backward captured into a graph after a first call. A launch with
// a bad index reports and writes nothing, even after a later plain call
// failed and was taken by the sync helper (its epoch is larger than the
// graph's: a record kept as the larger word would lose to it). Once the report
// is taken, launches with a good index compute the host twin's bits again.
TEST(CudaReports, GraphLaunchWithABadIndexReportsAndLaterLaunchesCompute) {
  GATECHECK_REQUIRE_GPU();
  take_earlier_reports();
  const TuningScope tuning_back;
  std::mt19937_64 rng(43);
  for (const int plan : {0, 2, 1}) {  // 600 rows x 9 gates: the one-kernel backward; counting; CUB
    SCOPED_TRACE("plan=" + std::to_string(plan));
    gate_residual_cuda_tuning().bwd_plan = plan;
    Call k(make_case(rng, DType::bf16, 600, 64, 9, Pattern::random));
    const RawOutputs host = run_host(k.c);
    ASSERT_TRUE(k.fwd().ok());
    ASSERT_TRUE(k.bwd().ok());
    ASSERT_TRUE(gate_residual_cuda_sync_status("warm-up", k.p(), k.idx()).ok());
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(cudaStreamBeginCapture(k.s, cudaStreamCaptureModeGlobal), cudaSuccess);
    const Status f = k.fwd(), b = k.bwd();
    ASSERT_EQ(cudaStreamEndCapture(k.s, &graph), cudaSuccess);
    ASSERT_TRUE(f.ok() && b.ok()) << f.message << b.message;
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);

    // A plain call fails after the capture, and the sync helper takes it.
    std::vector<int64_t> idx = k.c.index;
    idx[10] = 99;
    k.set_index(idx);
    ASSERT_TRUE(k.fwd().ok());
    EXPECT_FALSE(gate_residual_cuda_sync_status("plain", k.p(), k.idx()).ok());

    idx[10] = k.c.index[10];
    idx[77] = 9;
    k.set_index(idx);
    k.poison();
    ASSERT_EQ(cudaGraphLaunch(exec, k.s), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(k.s), cudaSuccess);
    expect_report(k.take(), 77, 9, 9, "forward");
    RawOutputs d = k.outputs();
    for (const auto* bits : {&d.out, &d.grad_res, &d.grad_y, &d.grad_gate})
      for (uint32_t x : *bits) ASSERT_EQ(x, 0xa5a5u) << "a launch with a bad index wrote an output";

    k.set_index(k.c.index);
    for (int i = 0; i < 2; ++i) {
      k.poison();
      ASSERT_EQ(cudaGraphLaunch(exec, k.s), cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(k.s), cudaSuccess);
      EXPECT_TRUE(k.take().ok());
      d = k.outputs();
      EXPECT_EQ(compare_outputs(k.c, d, host), "") << "launch " << i << " after the report was taken";
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
}

}  // namespace
}  // namespace testing_cuda
}  // namespace gatecheck
