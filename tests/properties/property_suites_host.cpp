// One RC_GTEST_PROP suite per property over the host implementation.
#include "property_suite.h"

namespace {
using namespace gatecheck;
const bool kParams = (testing::default_rc_params("max_success=25"), true);
const Implementation& host() {
  static const Implementation h = make_implementation("host", Device::cpu);
  return h;
}
}  // namespace

RC_GTEST_PROP(Accuracy, host, ()) { testing::check_generated(host(), "accuracy"); }
RC_GTEST_PROP(RowInvariance, host, ()) { testing::check_generated(host(), "row_invariance"); }
RC_GTEST_PROP(SegmentInvariance, host, ()) { testing::check_generated(host(), "segment_invariance"); }
RC_GTEST_PROP(Repeatable, host, ()) { testing::check_generated(host(), "repeatable"); }
RC_GTEST_PROP(InputsUntouched, host, ()) { testing::check_generated(host(), "inputs_untouched"); }
RC_GTEST_PROP(FullWrite, host, ()) { testing::check_generated(host(), "full_write"); }
RC_GTEST_PROP(NoOobWrite, host, ()) { testing::check_generated(host(), "no_oob_write"); }
RC_GTEST_PROP(ErrorInputs, host, ()) { testing::check_generated(host(), "error_inputs"); }
// Opt-in: host follows the eager rounding model for out, grad_res and grad_y.
RC_GTEST_PROP(EagerExact, host, ()) { testing::check_generated(host(), "eager_exact"); }
