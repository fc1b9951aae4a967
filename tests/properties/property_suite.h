// Shared pieces of the RapidCheck property suites (one RC_GTEST_PROP suite
// per property, instantiated per implementation by the cpu/torch/cuda files).
#pragma once

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdlib>
#include <string>

#include "harness/impls/implementation.h"
#include "properties/generate/generators.h"
#include "properties/checks/properties.h"

namespace gatecheck::testing {

// Generator limits for the suites: smaller than the CLI's so the whole CPU
// property run stays within CI time (about 3 minutes on 2 cores).
inline GenLimits suite_limits() {
  GenLimits l;
  if (const char* e = std::getenv("GATECHECK_SUITE_MAX_ROWS")) l.max_rows = std::atoll(e);
  if (const char* e = std::getenv("GATECHECK_SUITE_MAX_DIM")) l.max_dim = std::atoll(e);
  return l;
}

// RapidCheck reads RC_PARAMS once, on first use. The suites default to fewer
// cases than RapidCheck's 100 unless the caller set RC_PARAMS themselves
// (so RC_PARAMS="seed=... max_success=..." and "reproduce=..." still work).
inline void default_rc_params(const char* params) { setenv("RC_PARAMS", params, /*overwrite=*/0); }

// The body of every suite: a generated case on which the property can be
// checked non-vacuously; a failure that breaks the implementation's claim
// fails the property with its full evidence. A failure on an unclaimed
// property is a finding (reported by `gatecheck check`), not a test failure.
// eager_exact is opt-in and claimed by no default contract; its suites exist
// to assert it, so there every failure counts.
inline void check_generated(const Subject& impl, const std::string& property,
                            const GenLimits& limits = suite_limits()) {
  const Case c = *gen_case_for(property, limits);
  RC_TAG(c.index_pattern);
  const Verdict v = check_property(property, impl, c);
  const bool counts = property == "eager_exact" || breaks_claim(v, impl.contract, c.dtype);
  if (!v.passed && counts) RC_FAIL(describe(c) + "\n" + evidence_text(v));
}

// The implementation for a spec, or "" and the reason when it is not built
// or has no device here (the test then skips, saying why).
inline bool try_implementation(const std::string& spec, Device d, Subject* out, std::string* why) {
  try {
    *out = make_subject(spec, d);
    return true;
  } catch (const std::exception& e) {
    *why = e.what();
    return false;
  }
}

}  // namespace gatecheck::testing

// An RC_GTEST_PROP whose TEST first skips, with the reason, when the
// implementation is not available here (no GPU, or built without LibTorch).
// The expansion is RC_GTEST_PROP's own plus that check.
#define GATECHECK_RC_PROP_FOR(Suite, Name, Spec, Dev, Property) \
  GATECHECK_RC_PROP_LIMITS(Suite, Name, Spec, Dev, Property, ::gatecheck::testing::suite_limits())
#define GATECHECK_RC_PROP_LIMITS(Suite, Name, Spec, Dev, Property, Limits)                   \
  static ::gatecheck::Subject gc_impl_##Suite##_##Name;                               \
  static void gc_prop_##Suite##_##Name() {                                                   \
    ::gatecheck::testing::check_generated(gc_impl_##Suite##_##Name, Property, Limits);       \
  }                                                                                          \
  TEST(Suite, Name) {                                                                        \
    std::string why;                                                                         \
    if (!::gatecheck::testing::try_implementation(Spec, Dev, &gc_impl_##Suite##_##Name, &why)) \
      GTEST_SKIP() << why;                                                                   \
    ::rc::detail::checkGTest(&gc_prop_##Suite##_##Name);                                     \
  }
