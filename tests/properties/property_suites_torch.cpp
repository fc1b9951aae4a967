// The same suites over torch-eager on the CPU. Its contract withdraws
// accuracy:grad_gate for bf16/f16 (index_add accumulates in the dtype): those
// failures are findings, so only claimed failures fail here.
#include <algorithm>

#include "property_suite.h"

namespace {
const bool kParams = (gatecheck::testing::default_rc_params("max_success=100"), true);
}

#define TORCH_SUITE(Suite, Property) \
  GATECHECK_RC_PROP_FOR(Suite, torch_eager, "torch-eager", ::gatecheck::Device::cpu, Property)

// FINDING (see torch_finding_test.cpp): on the CPU, torch-eager's bf16 NaN
// bits depend on where a row sits in the batch (0xffff from the vectorised
// path, 0x7fc0 from the scalar tail), so row_invariance fails on NaN-producing
// inputs (f16 and f32 held in 300 cases each). Its contract withdraws
// row_invariance:out/:grad_y on the CPU for that reason. This suite still holds
// it to the full claim on every other value class (contract without
// exceptions, nan_inf left out); TorchEagerFinding.NanBitsDependOnTheRowsPlaceInTheBatch
// asserts the finding itself.
namespace {
gatecheck::GenLimits without_nan_inf() {
  auto l = gatecheck::testing::suite_limits();
  auto& v = l.value_classes;
  v.erase(std::remove(v.begin(), v.end(), "nan_inf"), v.end());
  return l;
}
gatecheck::Subject torch_strict;
void row_invariance_strict() {
  gatecheck::testing::check_generated(torch_strict, "row_invariance", without_nan_inf());
}
}  // namespace

TEST(RowInvariance, torch_eager) {
  std::string why;
  if (!gatecheck::testing::try_implementation("torch-eager", gatecheck::Device::cpu, &torch_strict, &why))
    GTEST_SKIP() << why;
  torch_strict.contract.exceptions.clear();
  ::rc::detail::checkGTest(&row_invariance_strict);
}

TORCH_SUITE(Accuracy, "accuracy")
TORCH_SUITE(SegmentInvariance, "segment_invariance")
TORCH_SUITE(Repeatable, "repeatable")
TORCH_SUITE(InputsUntouched, "inputs_untouched")
TORCH_SUITE(FullWrite, "full_write")
TORCH_SUITE(NoOobWrite, "no_oob_write")
TORCH_SUITE(ErrorInputs, "error_inputs")
TORCH_SUITE(EagerExact, "eager_exact")

// Under isolate, error_inputs probes torch-eager in a fresh process (this
// test binary re-executed; a fork would inherit LibTorch's thread pools, and
// LibTorch 2.x refuses autograd there). The probe task must be registered
// before the worker answers, which here is at static initialisation: were it
// not, every probe would come back "not registered" and this would fail.
TEST(ErrorInputsIsolated, torch_eager) {
  gatecheck::Subject impl;
  std::string why;
  if (!gatecheck::testing::try_implementation("torch-eager", gatecheck::Device::cpu, &impl, &why)) GTEST_SKIP() << why;
  gatecheck::PropertyOptions iso;
  iso.isolate = true;
  iso.isolate_timeout_seconds = 60;
  gatecheck::Case c = gatecheck::make_case(gatecheck::DType::f32, 3, 4, 2);
  c.index = {0, 1, 1};
  const gatecheck::Verdict v = gatecheck::check_property("error_inputs", impl, c, iso);
  EXPECT_TRUE(v.passed) << gatecheck::evidence_text(v);
  EXPECT_GE(v.compared, 20);
}
