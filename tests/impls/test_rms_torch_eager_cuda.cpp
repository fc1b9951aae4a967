// rmsnorm_modulate's torch-eager on CUDA (needs a GPU and a CUDA build of
// LibTorch; skips cleanly otherwise): every output within the oracle's
// bounds in f32, out in every dtype, and a bad index as an error naming it
// rather than a device-side assert that would poison the context.
#include <gtest/gtest.h>

#include "case/case_spec.h"
#include "harness/run/runner.h"
#include "kernels/rmsnorm_modulate.h"
#include "kernels/torch/rmsnorm_modulate_torch_eager.h"
#include "oracles/oracle.h"
#include "tests/gpu.h"
#include "tests/rmsnorm_test_cases.h"

namespace gatecheck {
namespace {

#define REQUIRE_TORCH_CUDA()                                                                                   \
  do {                                                                                                         \
    GATECHECK_REQUIRE_GPU();                                                                                   \
    if (!rmsnorm_modulate_torch_eager_plugin(Device::cuda)) GTEST_SKIP() << "this LibTorch cannot run on cuda"; \
  } while (0)

using testing::rms::op;

const Implementation& gpu() {
  static const Implementation impl = make_implementation("torch-eager", Device::cuda, op());
  return impl;
}

Case make(DType t, int64_t rows, int64_t dim, int64_t gates, uint64_t seed) {
  return testing::rms::make(t, rows, dim, gates, "normal", seed);
}

void expect_clean(const RunResult& r, const std::string& what) {
  EXPECT_TRUE(r.status.ok()) << what << ": " << r.status.message;
  for (const auto& m : r.memory) ADD_FAILURE() << what << ": " << m.detail;
}

TEST(RmsnormModulateTorchEagerCuda, WithinTheOracleBounds) {
  REQUIRE_TORCH_CUDA();
  struct { int64_t rows, dim, gates; } shapes[] = {{1, 1, 1}, {7, 5, 3}, {300, 67, 9}, {0, 4, 2}, {3, 5376, 2}};
  uint64_t seed = 100;
  for (DType t : {DType::f32, DType::bf16, DType::f16})
    for (const auto& s : shapes) {
      const Case c = make(t, s.rows, s.dim, s.gates, seed += 2);
      const RunResult got = run_case(gpu(), c);
      expect_clean(got, describe(c));
      const Reference ref = oracle_reference(c);
      // 16-bit gradients are eager's documented weakness (its contract).
      for (const OpOutput& o : op().outputs) {
        if (t != DType::f32 && std::string(o.name) != "out") continue;
        const Comparison cmp = compare_accuracy(o.name, got.outputs[o.name], ref[o.name]);
        EXPECT_TRUE(cmp.ok()) << describe(c) << "\n" << cmp.summary();
      }
    }
}

TEST(RmsnormModulateTorchEagerCuda, BadIndexIsAnErrorNotADeviceAssert) {
  REQUIRE_TORCH_CUDA();
  Case c = make(DType::f32, 5, 4, 2, 3);
  c.index[3] = 2;
  const RunResult r = run_case(gpu(), c);
  EXPECT_EQ(r.status.kind, ErrorKind::index_out_of_range) << r.status.message;
  EXPECT_NE(r.status.message.find("index[3] = 2"), std::string::npos) << r.status.message;
  expect_clean(run_case(gpu(), make(DType::f32, 5, 4, 2, 3)), "the same device afterwards");
}

}  // namespace
}  // namespace gatecheck
