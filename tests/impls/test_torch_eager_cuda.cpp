// torch-eager on CUDA (needs a GPU and a CUDA build of LibTorch; skips
// cleanly otherwise): bitwise agreement where eager rounds once, bad index as
// an error rather than a device assert, the two documented grad_gate findings
// (inaccurate in bf16, not repeatable), and --isolate on CUDA.
#include <gtest/gtest.h>

#include <cstdio>

#include "bits_equal.h"
#include "grad_gate_accuracy.h"
#include "harness/isolate/isolate.h"
#include "harness/run/runner.h"
#include "kernels/torch/torch_eager.h"
#include "random_case.h"
#include "tests/gpu.h"

namespace gatecheck {
namespace {

using test::bits_equal;
using test::random_case;

#define REQUIRE_TORCH_CUDA()                                                                  \
  do {                                                                                        \
    GATECHECK_REQUIRE_GPU();                                                                  \
    if (!torch_eager_plugin(Device::cuda)) GTEST_SKIP() << "this LibTorch cannot run on cuda"; \
  } while (0)

const Implementation& gpu() {
  static const Implementation impl = make_implementation("torch-eager", Device::cuda);
  return impl;
}
const Implementation& host() {
  static const Implementation impl = make_implementation("host", Device::cpu);
  return impl;
}

void expect_clean(const RunResult& r, const std::string& what) {
  EXPECT_TRUE(r.status.ok()) << what << ": " << r.status.message;
  for (const auto& m : r.memory) ADD_FAILURE() << what << ": " << m.detail;
}

TEST(TorchEagerCuda, RoundedOutputsMatchTheHostTwinBitForBit) {
  REQUIRE_TORCH_CUDA();
  struct { int64_t rows, dim, gates; } shapes[] = {{1, 1, 1}, {7, 5, 3}, {300, 64, 9}, {0, 4, 2}, {3, 0, 2}};
  uint64_t seed = 100;
  for (DType t : {DType::f32, DType::bf16, DType::f16})
    for (const auto& s : shapes) {
      const Case c = random_case(t, s.rows, s.dim, s.gates, seed++);
      const RunResult got = run_case(gpu(), c);
      const RunResult want = run_case(host(), c);
      expect_clean(got, describe(c));
      for (const char* name : {"out", "grad_res", "grad_y"})
        EXPECT_TRUE(bits_equal(name, got.outputs[name], want.outputs[name]))
            << describe(c);
    }
}

TEST(TorchEagerCuda, BadIndexIsAnErrorNotADeviceAssert) {
  REQUIRE_TORCH_CUDA();
  Case c = random_case(DType::f32, 5, 4, 2, 3);
  c.index[3] = 2;
  const RunResult r = run_case(gpu(), c);
  EXPECT_EQ(r.status.kind, ErrorKind::index_out_of_range) << r.status.message;
  EXPECT_NE(r.status.message.find("index[3] = 2 is out of range"), std::string::npos) << r.status.message;
  expect_clean(run_case(gpu(), random_case(DType::f32, 5, 4, 2, 3)), "the same device afterwards");
}

// The prior art's first finding: index_add on CUDA accumulates in bf16.
TEST(TorchEagerCudaFinding, Bf16GradGateIsInaccurateOnALongSegment) {
  REQUIRE_TORCH_CUDA();
  const double probe = test::sum_of_4096_ones(gpu(), DType::bf16);
  std::printf("LibTorch %s cuda: 4096 bf16 ones sum to %g\n", libtorch_version().c_str(), probe);
  EXPECT_EQ(probe, test::kSumInBf16) << "index_add on CUDA is documented to accumulate in bf16";
  const Case c = random_case(DType::bf16, 4097, 64, 1, 2024);
  const RunResult eager = run_case(gpu(), c);
  expect_clean(eager, describe(c));
  const double err = test::grad_gate_relative_error(c, eager.outputs["grad_gate"]);
  std::printf("cuda bf16 grad_gate relative error at 4097 rows: %.4f\n", err);
  EXPECT_GT(err, 0.01);
}

// The second: index_add on CUDA uses atomics, so a long segment's bf16
// grad_gate differs from run to run.
TEST(TorchEagerCudaFinding, GradGateIsNotRepeatable) {
  REQUIRE_TORCH_CUDA();
  const Case c = random_case(DType::bf16, 4097, 64, 1, 2024);
  const RunResult first = run_case(gpu(), c);
  expect_clean(first, describe(c));
  int differed = 0;
  for (int run = 0; run < 20; ++run)
    differed += !bits_equal("grad_gate", run_case(gpu(), c).outputs["grad_gate"], first.outputs["grad_gate"]);
  std::printf("%d of 20 reruns differed from the first run\n", differed);
  EXPECT_GT(differed, 0) << "20 reruns gave bit-identical grad_gate";
}

// --isolate on CUDA runs in a fresh process, so it works after this process
// has used CUDA itself (a plain fork would fail with "initialization error").
TEST(TorchEagerCuda, RunsIsolatedAfterTheParentUsedCuda) {
  REQUIRE_TORCH_CUDA();
  const Case c = random_case(DType::bf16, 300, 64, 9, 8);
  const RunResult parent = run_case(gpu(), c);
  expect_clean(parent, describe(c));
  const RunResult child = run_case_isolated(gpu(), c, {}, 120);
  expect_clean(child, "isolated " + describe(c));
  for (const char* name : {"out", "grad_res", "grad_y"})
    EXPECT_TRUE(bits_equal(name, child.outputs[name], parent.outputs[name]));
}

}  // namespace
}  // namespace gatecheck
