// The same suites over torch-eager on the CPU. Its contract withdraws
// accuracy:grad_gate for bf16/f16 (index_add accumulates in the dtype): those
// failures are findings, so only claimed failures fail here.
#include "property_suite.h"

namespace {
const bool kParams = (gatecheck::testing::default_rc_params("max_success=12"), true);
}

#define TORCH_SUITE(Suite, Property) \
  GATECHECK_RC_PROP_FOR(Suite, torch_eager, "torch-eager", ::gatecheck::Device::cpu, Property)
TORCH_SUITE(Accuracy, "accuracy")
TORCH_SUITE(RowInvariance, "row_invariance")
TORCH_SUITE(SegmentInvariance, "segment_invariance")
TORCH_SUITE(Repeatable, "repeatable")
TORCH_SUITE(InputsUntouched, "inputs_untouched")
TORCH_SUITE(FullWrite, "full_write")
TORCH_SUITE(NoOobWrite, "no_oob_write")
TORCH_SUITE(ErrorInputs, "error_inputs")
TORCH_SUITE(EagerExact, "eager_exact")
