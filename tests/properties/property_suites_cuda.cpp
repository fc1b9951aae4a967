// The same suites over the CUDA kernels (ctest label gpu). Each skips, saying
// why, on a machine without a CUDA device.
#include "property_suite.h"

namespace {
const bool kParams = (gatecheck::testing::default_rc_params("max_success=50"), true);
}

#define CUDA_SUITE(Suite, Property) \
  GATECHECK_RC_PROP_FOR(Suite, cuda, "cuda", ::gatecheck::Device::cuda, Property)
CUDA_SUITE(Accuracy, "accuracy")
CUDA_SUITE(RowInvariance, "row_invariance")
CUDA_SUITE(SegmentInvariance, "segment_invariance")
CUDA_SUITE(Repeatable, "repeatable")
CUDA_SUITE(InputsUntouched, "inputs_untouched")
CUDA_SUITE(FullWrite, "full_write")
CUDA_SUITE(NoOobWrite, "no_oob_write")
CUDA_SUITE(ErrorInputs, "error_inputs")
CUDA_SUITE(EagerExact, "eager_exact")
