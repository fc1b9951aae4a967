// torch-eager (LibTorch's res + gate.index_select(0, idx) * y with autograd):
// its bitwise agreement with the eager rounding model where eager is exact,
// its documented grad_gate finding, empty problems, bad input and exceptions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bits_equal.h"
#include "harness/isolate.h"
#include "harness/runner.h"
#include "kernels/gate_residual_math.h"
#include "kernels/host/gate_residual_host.h"
#include "kernels/torch/torch_eager.h"
#include "random_case.h"
#include "tests/gpu.h"

namespace gatecheck {
namespace {

using test::bits_equal;
using test::random_case;

const Implementation& torch_cpu() {
  static const Implementation impl = make_implementation("torch-eager", Device::cpu);
  return impl;
}
const Implementation& host() {
  static const Implementation impl = make_implementation("host", Device::cpu);
  return impl;
}

const DType kDTypes[] = {DType::f32, DType::bf16, DType::f16};

struct Shape {
  int64_t rows, dim, gates;
  const char* why;
};
const Shape kShapes[] = {
    {1, 1, 1, "the smallest problem"},
    {7, 5, 3, "odd sizes, a tail of any vector width"},
    {300, 64, 9, "H3's 9 gates, every segment well under one 256-row tile"},
    {600, 16, 2, "segments of ~300 rows: two tiles in the host twin"},
};

int64_t longest_segment(const Case& c) {
  std::vector<int64_t> n(size_t(c.gates), 0);
  int64_t most = 0;
  for (int64_t k : c.index) most = std::max(most, ++n[size_t(k)]);
  return most;
}

void expect_clean(const RunResult& r, const std::string& what) {
  EXPECT_TRUE(r.status.ok()) << what << ": " << r.status.message;
  for (const auto& m : r.memory) ADD_FAILURE() << what << ": " << m.detail;
}

// out, grad_res and grad_y have one eager rounding each, which the host twin
// performs too: LibTorch must agree bit for bit in every dtype it supports.
// grad_gate agrees for f32 while each gate's rows fit one host tile: then both
// add the fp32 terms in row order from +0. Beyond a tile, or in bf16/f16 where
// eager accumulates in the dtype, it is not expected to match.
TEST(TorchEager, RoundedOutputsMatchTheHostTwinBitForBit) {
  uint64_t seed = 1;
  for (DType t : kDTypes) {
    for (const Shape& s : kShapes) {
      const Case c = random_case(t, s.rows, s.dim, s.gates, seed++);
      const std::string what = describe(c) + " (" + s.why + ")";
      const RunResult got = run_case(torch_cpu(), c);
      const RunResult want = run_case(host(), c);
      expect_clean(got, what);
      expect_clean(want, what);
      EXPECT_TRUE(bits_equal("out", got.outputs.out, want.outputs.out)) << what;
      EXPECT_TRUE(bits_equal("grad_res", got.outputs.grad_res, want.outputs.grad_res)) << what;
      EXPECT_TRUE(bits_equal("grad_y", got.outputs.grad_y, want.outputs.grad_y)) << what;
      if (t == DType::f32 && longest_segment(c) <= kGradGateTileRows) {
        EXPECT_TRUE(bits_equal("grad_gate", got.outputs.grad_gate, want.outputs.grad_gate)) << what;
      }
    }
  }
}

// The comparison above can fail: LibTorch's bf16 grad_gate, accumulated in
// bf16, is not the host twin's fp32 sum on a long segment.
TEST(TorchEager, BitwiseComparisonSeesBf16GradGateAccumulation) {
  const Case c = random_case(DType::bf16, 600, 16, 1, 42);
  const RunResult got = run_case(torch_cpu(), c);
  const RunResult want = run_case(host(), c);
  expect_clean(got, describe(c));
  EXPECT_FALSE(bits_equal("grad_gate", got.outputs.grad_gate, want.outputs.grad_gate));
}

TEST(TorchEager, EmptyProblemsAreValid) {
  const Shape empty[] = {{0, 5, 3, "no rows: grad_gate is all zeros"},
                         {4, 0, 2, "no columns"},
                         {0, 0, 0, "nothing at all"},
                         {0, 3, 0, "no rows and no gates"}};
  for (DType t : kDTypes)
    for (const Shape& s : empty) {
      const Case c = random_case(t, s.rows, s.dim, s.gates, 7);
      const RunResult got = run_case(torch_cpu(), c);
      const RunResult want = run_case(host(), c);
      const std::string what = describe(c) + " (" + s.why + ")";
      expect_clean(got, what);
      for (const char* name : kOutputNames)
        EXPECT_TRUE(bits_equal(name, output_by_name(got.outputs, name), output_by_name(want.outputs, name)))
            << what;
    }
}

// ---- bad input: the same error kind and message as the host twin, nothing written

struct Buffers {
  explicit Buffers(size_t n) : a(n, 0.5f), b(n, 0.5f), c(n, 0.5f), out(n, -7.0f), g2(n, -7.0f), g3(n, -7.0f) {}
  std::vector<float> a, b, c, out, g2, g3;
  bool outputs_untouched() const {
    for (const auto* v : {&out, &g2, &g3})
      for (float x : *v)
        if (x != -7.0f) return false;
    return true;
  }
};

struct BadInput {
  const char* what;
  gatecheck_problem p;
  std::vector<int64_t> index;
  bool null_first_tensor;
  ErrorKind kind;
};

std::vector<BadInput> bad_inputs() {
  const gatecheck_problem ok{3, 2, 2, GATECHECK_F32, GATECHECK_CPU, nullptr};
  auto with = [&](auto change) {
    gatecheck_problem p = ok;
    change(p);
    return p;
  };
  return {
      {"index too large", ok, {0, 2, 1}, false, ErrorKind::index_out_of_range},
      {"index negative", ok, {0, 1, -1}, false, ErrorKind::index_out_of_range},
      {"gates = 0 with rows", with([](auto& p) { p.gates = 0; }), {0, 0, 0}, false, ErrorKind::no_gates},
      {"null tensor", ok, {0, 1, 1}, true, ErrorKind::null_pointer},
      {"unknown dtype", with([](auto& p) { p.dtype = 7; }), {0, 1, 1}, false, ErrorKind::dtype_mismatch},
      {"cuda problem on the cpu build", with([](auto& p) { p.device = GATECHECK_CUDA; }), {0, 1, 1}, false,
       ErrorKind::unsupported_device},
      {"negative dim", with([](auto& p) { p.dim = -1; }), {0, 1, 1}, false, ErrorKind::shape_mismatch},
      {"rows*dim overflows", with([](auto& p) { p.dim = int64_t(1) << 62; }), {0, 1, 1}, false,
       ErrorKind::size_overflow},
  };
}

TEST(TorchEager, BadInputIsRejectedLikeTheHostTwinAndWritesNothing) {
  const gatecheck_plugin* torch = torch_eager_plugin(Device::cpu);
  const gatecheck_plugin* twin = gate_residual_host_plugin();
  for (const BadInput& b : bad_inputs()) {
    for (const bool fwd : {true, false}) {
      std::string msg[2];
      int rc[2];
      for (int which = 0; which < 2; ++which) {
        const gatecheck_plugin* api = which ? twin : torch;
        Buffers buf(16);
        const void* first = b.null_first_tensor ? nullptr : buf.a.data();
        rc[which] = fwd ? api->forward(&b.p, first, buf.b.data(), b.index.data(), buf.c.data(), buf.out.data())
                        : api->backward(&b.p, first, buf.b.data(), b.index.data(), buf.c.data(),
                                        buf.out.data(), buf.g2.data(), buf.g3.data());
        msg[which] = api->last_error();
        EXPECT_TRUE(buf.outputs_untouched()) << b.what << ": " << api->name << " wrote an output";
      }
      const char* op = fwd ? "forward" : "backward";
      EXPECT_EQ(rc[0], int(b.kind)) << b.what << " (" << op << "): " << msg[0];
      EXPECT_EQ(rc[0], rc[1]) << b.what << " (" << op << ")";
      EXPECT_EQ(msg[0], msg[1]) << b.what << " (" << op << ")";
    }
  }
}

TEST(TorchEager, IndexErrorNamesTheRowAndValue) {
  const gatecheck_problem p{3, 2, 2, GATECHECK_BF16, GATECHECK_CPU, nullptr};
  std::vector<uint16_t> t(6, 0x3f80);
  const int64_t index[] = {0, 1, 9};
  const gatecheck_plugin* api = torch_eager_plugin(Device::cpu);
  ASSERT_NE(api->forward(&p, t.data(), t.data(), index, t.data(), t.data()), 0);
  EXPECT_NE(std::string(api->last_error()).find("index[2] = 9 is out of range [0, 2)"), std::string::npos)
      << api->last_error();
}

// A LibTorch exception never crosses the C ABI: the gate-shaped gradient of
// 2^50 fp32 gates (4 PiB) cannot be allocated on any machine, and the failure
// comes back as an implementation error carrying LibTorch's message.
TEST(TorchEager, LibTorchExceptionsBecomeErrors) {
  const gatecheck_problem p{1, 1, int64_t(1) << 50, GATECHECK_F32, GATECHECK_CPU, nullptr};
  float g = 1, gate = 2, y = 3, grad_res = -7, grad_gate = -7, grad_y = -7;
  const int64_t index[] = {0};  // only gate row 0 is ever read
  const gatecheck_plugin* api = torch_eager_plugin(Device::cpu);
  const int rc = api->backward(&p, &g, &gate, index, &y, &grad_res, &grad_gate, &grad_y);
  EXPECT_EQ(rc, int(ErrorKind::implementation));
  const std::string msg = api->last_error();
  EXPECT_NE(msg.find("gate_residual_bwd: LibTorch: "), std::string::npos) << msg;
  EXPECT_EQ(grad_res, -7.0f);
  EXPECT_EQ(grad_y, -7.0f);
  EXPECT_EQ(grad_gate, -7.0f);
}

// ---- the documented finding: eager's grad_gate accumulates in the dtype -----

// max |got - exact| / max |exact| over grad_gate, exact in float64, as the
// prior art measures it.
double grad_gate_relative_error(const Case& c, const HostTensor& got) {
  std::vector<double> exact(size_t(c.gates * c.dim), 0.0);
  for (int64_t r = 0; r < c.rows; ++r)
    for (int64_t j = 0; j < c.dim; ++j)
      exact[size_t(c.index[size_t(r)] * c.dim + j)] +=
          double(c.grad_out.value(r * c.dim + j)) * double(c.y.value(r * c.dim + j));
  double err = 0, mag = 0;
  for (size_t i = 0; i < exact.size(); ++i) {
    err = std::max(err, std::fabs(double(got.value(int64_t(i))) - exact[i]));
    mag = std::max(mag, std::fabs(exact[i]));
  }
  return err / mag;
}

// One gate, 4097 rows, dim 64, N(0,1) data with the gate x0.1, as the prior
// art (relative error 0.043 on a B200; about 0.04 with LibTorch 1.13 here).
// The host twin, which sums in fp32 and rounds once, is the control: the
// same measure must be small for it, so the measure can tell them apart.
TEST(TorchEagerFinding, Bf16GradGateIsInaccurateOnALongSegment) {
  const Case c = random_case(DType::bf16, 4097, 64, 1, 2024);
  const RunResult eager = run_case(torch_cpu(), c);
  const RunResult twin = run_case(host(), c);
  expect_clean(eager, describe(c));
  expect_clean(twin, describe(c));
  const double eager_err = grad_gate_relative_error(c, eager.outputs.grad_gate);
  const double twin_err = grad_gate_relative_error(c, twin.outputs.grad_gate);
  RecordProperty("eager_bf16_rel_err", std::to_string(eager_err));
  std::printf("bf16 grad_gate relative error at 4097 rows: torch-eager %.4f, host %.5f\n", eager_err, twin_err);
  EXPECT_GT(eager_err, 0.01) << "torch-eager's bf16 grad_gate is documented as inaccurate here";
  EXPECT_LT(twin_err, 0.005) << "the host twin rounds once and must be accurate";
}

TEST(TorchEagerFinding, F16GradGateLosesAccuracyToo) {
  const Case c = random_case(DType::f16, 4097, 64, 1, 2024);
  const RunResult eager = run_case(torch_cpu(), c);
  const RunResult twin = run_case(host(), c);
  expect_clean(eager, describe(c));
  const double eager_err = grad_gate_relative_error(c, eager.outputs.grad_gate);
  const double twin_err = grad_gate_relative_error(c, twin.outputs.grad_gate);
  std::printf("f16 grad_gate relative error at 4097 rows: torch-eager %.5f, host %.6f\n", eager_err, twin_err);
  EXPECT_GT(eager_err, 4 * twin_err);
}

// --isolate forks after LibTorch has run its CPU thread pool in this process
// (the 4097-row case above is large enough to go parallel): the child must
// still compute, and return the same bits.
TEST(TorchEager, RunsIsolatedAfterParallelWorkInTheParent) {
  const Case big = random_case(DType::bf16, 4097, 64, 3, 5);
  const RunResult parent = run_case(torch_cpu(), big);
  expect_clean(parent, describe(big));
  const RunResult child = run_case_isolated(torch_cpu(), big, {}, 60);
  expect_clean(child, "isolated " + describe(big));
  for (const char* name : kOutputNames)
    EXPECT_TRUE(bits_equal(name, output_by_name(child.outputs, name), output_by_name(parent.outputs, name)));
}

// ---- CUDA (needs a GPU and a CUDA build of LibTorch) -----------------------

const gatecheck_plugin* torch_cuda_or_skip() {
  return cuda_available() ? torch_eager_plugin(Device::cuda) : nullptr;
}

TEST(TorchEagerCuda, RoundedOutputsMatchTheHostTwinBitForBit) {
  GATECHECK_REQUIRE_GPU();
  if (!torch_cuda_or_skip()) GTEST_SKIP() << "this LibTorch cannot run on cuda";
  const Implementation gpu = make_implementation("torch-eager", Device::cuda);
  uint64_t seed = 100;
  for (DType t : kDTypes)
    for (const Shape& s : kShapes) {
      const Case c = random_case(t, s.rows, s.dim, s.gates, seed++);
      const RunResult got = run_case(gpu, c);
      const RunResult want = run_case(host(), c);
      expect_clean(got, describe(c));
      EXPECT_TRUE(bits_equal("out", got.outputs.out, want.outputs.out)) << describe(c);
      EXPECT_TRUE(bits_equal("grad_res", got.outputs.grad_res, want.outputs.grad_res)) << describe(c);
      EXPECT_TRUE(bits_equal("grad_y", got.outputs.grad_y, want.outputs.grad_y)) << describe(c);
    }
}

TEST(TorchEagerCuda, BadIndexIsAnErrorNotADeviceAssert) {
  GATECHECK_REQUIRE_GPU();
  if (!torch_cuda_or_skip()) GTEST_SKIP() << "this LibTorch cannot run on cuda";
  const Implementation gpu = make_implementation("torch-eager", Device::cuda);
  Case c = random_case(DType::f32, 5, 4, 2, 3);
  c.index[3] = 2;
  const RunResult r = run_case(gpu, c);
  EXPECT_EQ(r.status.kind, ErrorKind::index_out_of_range) << r.status.message;
  EXPECT_NE(r.status.message.find("index[3] = 2"), std::string::npos) << r.status.message;
  expect_clean(run_case(gpu, random_case(DType::f32, 5, 4, 2, 3)), "the same device afterwards");
}

// --isolate on cuda: the child initialises CUDA itself, which works when the
// parent has only asked whether a device exists (as make_implementation and
// these skips do) and has run nothing on it. A threadsafe death test
// re-executes this binary for the statement, so earlier tests cannot have
// used CUDA in the process that forks.
TEST(TorchEagerCuda, RunsIsolatedWhenTheParentHasNotUsedCuda) {
  GATECHECK_REQUIRE_GPU();
  if (!torch_cuda_or_skip()) GTEST_SKIP() << "this LibTorch cannot run on cuda";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        const Implementation gpu = make_implementation("torch-eager", Device::cuda);
        const Case c = random_case(DType::bf16, 300, 64, 9, 8);
        const RunResult got = run_case_isolated(gpu, c, {}, 120);
        const RunResult want = run_case(host(), c);
        std::fprintf(stderr, "isolated: %s\n", got.status.ok() ? "ok" : got.status.message.c_str());
        std::_Exit(got.status.ok() && got.outputs.out == want.outputs.out ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "isolated: ok");
}

// The limit of the above, measured: once the parent has run CUDA work, the
// child cannot use CUDA; that must come back as a reported error (not a hang
// and not a dead parent).
TEST(TorchEagerCuda, IsolatedAfterTheParentUsedCudaIsAReportedError) {
  GATECHECK_REQUIRE_GPU();
  if (!torch_cuda_or_skip()) GTEST_SKIP() << "this LibTorch cannot run on cuda";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        const Implementation gpu = make_implementation("torch-eager", Device::cuda);
        const Case c = random_case(DType::bf16, 30, 8, 3, 8);
        const RunResult first = run_case(gpu, c);
        const RunResult got = run_case_isolated(gpu, c, {}, 60);
        std::fprintf(stderr, "parent: %s; isolated: %s\n", first.status.ok() ? "ok" : first.status.message.c_str(),
                     got.status.ok() ? "ok" : got.status.message.c_str());
        std::_Exit(first.status.ok() ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "isolated: ");
}

// The second documented finding: index_add on CUDA uses atomics, so a long
// segment's bf16 grad_gate differs from run to run.
TEST(TorchEagerCudaFinding, GradGateIsNotRepeatable) {
  GATECHECK_REQUIRE_GPU();
  if (!torch_cuda_or_skip()) GTEST_SKIP() << "this LibTorch cannot run on cuda";
  const Implementation gpu = make_implementation("torch-eager", Device::cuda);
  const Case c = random_case(DType::bf16, 4097, 64, 1, 2024);
  const RunResult first = run_case(gpu, c);
  expect_clean(first, describe(c));
  bool differed = false;
  for (int run = 0; run < 20 && !differed; ++run)
    differed = !bits_equal("grad_gate", run_case(gpu, c).outputs.grad_gate, first.outputs.grad_gate);
  EXPECT_TRUE(differed) << "20 reruns gave bit-identical grad_gate";
}

}  // namespace
}  // namespace gatecheck
