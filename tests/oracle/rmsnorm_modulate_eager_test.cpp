// rmsnorm_modulate's eager model (oracles/rmsnorm_modulate_eager.cpp) against
// LibTorch itself: torch-eager's out on the CPU, bit for bit, for every dtype
// and value class, over dims on both sides of each step of LibTorch's
// cascade sum (the scalar path below 8, the vector tail, a level's flush at
// 16 and 256 groups of 4 vectors). NaN payloads are LibTorch's own
// (nan_any). And the model pins an order: the host twin, which sums left to
// right, differs from it where the order changes a rounding.
#include <gtest/gtest.h>

#include <cstdio>

#include "case/case_spec.h"
#include "harness/impls/implementation.h"
#include "harness/run/runner.h"
#include "kernels/rmsnorm_modulate.h"
#include "kernels/torch/torch_eager.h"
#include "oracles/op_oracles.h"
#include "oracle_test_support.h"
#include "tests/rmsnorm_test_cases.h"

namespace gatecheck::testing {
namespace {

using rms::make;
using rms::op;
HostTensor run_out(const char* impl, const Case& c) {
  const Implementation i = make_implementation(impl, Device::cpu, op());
  RunResult r = run_case(i, c);
  EXPECT_TRUE(r.status.ok()) << impl << ": " << r.status.message;
  return r.outputs["out"];
}

// The model is of LibTorch 1.13's CPU kernels (the one this project builds
// against); another LibTorch may order its sum otherwise (2.x dispatches
// 16-lane AVX-512 kernels where the CPU has them), which the model does not
// claim.
#define REQUIRE_LIBTORCH_1_13()                                                              \
  do {                                                                                        \
    if (libtorch_version().rfind("1.13", 0) != 0)                                             \
      GTEST_SKIP() << "the eager model is LibTorch 1.13's CPU order; this is " << libtorch_version(); \
  } while (0)

TEST(RmsnormModulateEagerModel, OutBitForBitWithTorchEagerOnTheCpu) {
  REQUIRE_LIBTORCH_1_13();
  uint64_t seed = 33;
  int64_t compared = 0;
  for (DType t : kAllDTypes)
    for (const std::string& cls : value_classes_of(op()))
      for (auto [rows, dim, gates] : {std::tuple{3, 1, 1}, {4, 3, 2}, {2, 7, 2}, {3, 8, 1}, {2, 9, 3}, {5, 67, 2},
                                      {2, 520, 2}, {1, 1000, 1}, {1, 8200, 1}}) {
        const Case c = make(t, rows, dim, gates, cls, seed += 3);
        const Comparison cmp = compare_bitwise("out", run_out("torch-eager", c), eager_model(c)["out"], /*nan_any=*/true);
        compared += cmp.checked;
        EXPECT_TRUE(cmp.ok()) << describe(c) << "\n" << cmp.summary();
      }
  EXPECT_GT(compared, 100000);
}

// The model's order is not "any order": the host twin's left-to-right sum
// differs from it on some row where the order shows (values over many
// binades, a row wider than one vector).
TEST(RmsnormModulateEagerModel, PinsTheReductionOrder) {
  int64_t differing = 0;
  for (uint64_t seed = 1; seed <= 20 && differing == 0; ++seed) {
    const Case c = make(DType::f32, 8, 67, 2, "binade_span", seed);
    differing += compare_bitwise("out", run_out("host", c), eager_model(c)["out"], /*nan_any=*/true).failed;
  }
  EXPECT_GT(differing, 0) << "the host twin never differed from the eager model";
}

// Why torch eager's contract withdraws 16-bit accuracy of dshift and dscale:
// where its CPU index_add_ sums in the dtype (LibTorch 1.13; the probe below
// says which), a long segment (4097 rows of one index) leaves the oracle's
// bound in bf16, where the host twin's fp32 sums stay inside. Where it sums
// in fp32 (LibTorch 2.x on the CPU) the withdrawal costs nothing: both pass.
TEST(RmsnormModulateEagerModel, TorchEagersBf16SegmentSumsAndTheBound) {
  const Implementation eager = make_implementation("torch-eager", Device::cpu, op());
  const Implementation host = make_implementation("host", Device::cpu, op());
  // The probe: dshift of 4096 rows whose upstream gradient is 1, one index.
  Case ones = make(DType::bf16, 4096, 1, 1, "normal", 1);
  for (int64_t i = 0; i < ones.input("grad_out").numel(); ++i) ones.input("grad_out").set_value_rn(i, 1.0f);
  const RunResult p = run_case(eager, ones);
  ASSERT_TRUE(p.status.ok()) << p.status.message;
  const float probe = p.outputs["dshift"].value(0);
  std::printf("LibTorch %s cpu: 4096 bf16 ones sum to %g\n", libtorch_version().c_str(), probe);
  ASSERT_TRUE(probe == 256.0f || probe == 4096.0f) << probe;  // in bf16 (256 + 1 = 256), or in fp32
  const bool in_dtype = probe == 256.0f;

  const Case c = make(DType::bf16, 4097, 8, 1, "normal", 4097);
  const RunResult e = run_case(eager, c), h = run_case(host, c);
  ASSERT_TRUE(e.status.ok() && h.status.ok()) << e.status.message << h.status.message;
  const Reference ref = oracle_reference(c);
  for (const char* name : {"dshift", "dscale"}) {
    EXPECT_EQ(compare_accuracy(name, e.outputs[name], ref[name]).ok(), !in_dtype) << name;
    EXPECT_TRUE(compare_accuracy(name, h.outputs[name], ref[name]).ok()) << name << ": the host outside the bound";
  }
}

}  // namespace
}  // namespace gatecheck::testing
