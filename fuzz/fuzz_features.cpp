#include "fuzz_features.h"

#include <cmath>

namespace gatecheck::fuzz {
namespace {

// Room for each named list of the property generators (checked in hit()).
constexpr int kPatterns = 16, kValues = 16, kPlans = 16, kDtypes = 3, kBuckets = 16;
constexpr int kImpls = 4, kOutputs = 8;  // error features: rmsnorm_modulate has 5 outputs
// Layout of the counter array, one block per feature family.
constexpr int kClassBase = 0;                                       // pattern x value x dtype
constexpr int kShapeBase = kClassBase + kPatterns * kValues * kDtypes;  // shape class x dtype
constexpr int kPlanBase = kShapeBase + kShapeClasses * kDtypes;         // plan x pattern
constexpr int kErrorBase = kPlanBase + kPlans * kPatterns;              // impl x output x bucket
constexpr int kCounters = kErrorBase + kImpls * kOutputs * kBuckets;

// libFuzzer collects every byte of this section as features (and clears them
// before each input).
__attribute__((used, section("__libfuzzer_extra_counters"))) uint8_t extra_counters[kCounters];

void hit(int i) {
  if (i >= 0 && i < kCounters) extra_counters[i] = 1;
}

}  // namespace

void note_case_features(const Case& c, const DecodeInfo& info) {
  const int t = int(c.dtype);
  if (info.pattern >= kPatterns || info.values >= kValues || info.plan >= kPlans) return;  // a list outgrew its room
  hit(kClassBase + (info.pattern * kValues + info.values) * kDtypes + t);
  hit(kShapeBase + info.shape_class * kDtypes + t);
  hit(kPlanBase + info.plan * kPatterns + info.pattern);
}

int error_bucket(double r) {
  if (std::isnan(r) || r > 1) return kBuckets - 1;  // over the bound (or not comparable)
  if (r <= 0) return 0;                             // bit-exact
  // 2^-13 .. 1 in 14 log2 steps: 1..14.
  const int b = 14 + int(std::floor(std::log2(r)));
  return b < 1 ? 1 : b > 14 ? 14 : b;
}

void note_error_feature(int impl, int output, double err_over_bound) {
  if (impl < 0 || impl >= kImpls || output < 0 || output >= kOutputs) return;
  hit(kErrorBase + (impl * kOutputs + output) * kBuckets + error_bucket(err_over_bound));
}

}  // namespace gatecheck::fuzz
