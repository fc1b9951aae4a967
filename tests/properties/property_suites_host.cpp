// One RC_GTEST_PROP suite per property over the host implementation.
#include "property_suite.h"

namespace {
using gatecheck::Subject;
using gatecheck::Device;
using gatecheck::make_implementation;
// RapidCheck's default 100 cases per property: about 12 s for all nine here.
const Subject& host() {
  static const Subject h = make_subject("host", Device::cpu);
  return h;
}
}  // namespace

RC_GTEST_PROP(Accuracy, host, ()) { gatecheck::testing::check_generated(host(), "accuracy"); }
RC_GTEST_PROP(RowInvariance, host, ()) { gatecheck::testing::check_generated(host(), "row_invariance"); }
RC_GTEST_PROP(SegmentInvariance, host, ()) { gatecheck::testing::check_generated(host(), "segment_invariance"); }
RC_GTEST_PROP(Repeatable, host, ()) { gatecheck::testing::check_generated(host(), "repeatable"); }
RC_GTEST_PROP(InputsUntouched, host, ()) { gatecheck::testing::check_generated(host(), "inputs_untouched"); }
RC_GTEST_PROP(FullWrite, host, ()) { gatecheck::testing::check_generated(host(), "full_write"); }
RC_GTEST_PROP(NoOobWrite, host, ()) { gatecheck::testing::check_generated(host(), "no_oob_write"); }
RC_GTEST_PROP(ErrorInputs, host, ()) { gatecheck::testing::check_generated(host(), "error_inputs"); }
// Opt-in: host follows the eager rounding model for out, grad_res and grad_y.
RC_GTEST_PROP(EagerExact, host, ()) { gatecheck::testing::check_generated(host(), "eager_exact"); }
