// split_invariance at scale (properties/scale/scale_split.cpp): the scale
// tier draws it large cases split into up to 64 parts, contiguous and not,
// run in a scale session where the implementation runs;
// an implementation without an exchange (host: the framework's fp32 sum)
// fails it past 65,535 rows, naming the split and the element, and so does
// an exchange that loses a part; host-repro's exchange passes.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "case/case_json.h"
#include "case/case_spec.h"
#include "properties/checks/properties.h"
#include "properties/scale/scale_properties.h"
#include "properties/scale/scale_tier.h"
#include "properties/scale/shrink_scale.h"

namespace gatecheck {
namespace {

ScaleCase big_split(const std::string& kind, int64_t rows, int64_t dim, uint64_t seed) {
  ScaleSpec s;
  s.dtype = DType::bf16;
  s.rows = rows;
  s.dim = dim;
  s.gates = 9;
  s.index_seed = seed;
  s.values = ScaleValues::rounding;
  s.value_seed = seed + 1;
  s.plan_kind = kind;
  s.plan_seed = seed + 2;
  return make_scale_case(s);
}

TEST(SplitAtScale, TheTierDrawsLargeSplitsOfUpTo64Parts) {
  ASSERT_TRUE(has_scale_version("split_invariance"));
  // a GPU's limits (no device needed to draw) and the CPU's
  ScaleLimits gpu;
  gpu.device = Device::cuda;
  gpu.max_elements = int64_t(1) << 34;
  gpu.memory_bytes = uint64_t(80) << 30;
  std::set<std::string> kinds;
  int64_t max_parts = 0, max_rows = 0, max_dim = 0;
  int64_t max_elements = 0;
  for (const ScaleLimits& l : {gpu, scale_limits(Device::cpu, ScaleOptions{})})
    for (int j = 0; j < 24; ++j) {
      const ScaleSpec s = draw_scale_case(7, "split_invariance", j, l);
      const ScaleCase c = make_scale_case(s);
      ASSERT_TRUE(is_split_kind(s.plan_kind)) << describe(c);
      ASSERT_TRUE(c.plan) << describe(c);
      EXPECT_LE(c.gates * c.dim, kScaleSplitTableElements) << describe(c);  // what comes to the host
      if (l.device == Device::cuda) max_elements = std::max(max_elements, c.elements());
      EXPECT_GE(c.plan->batches.size(), 2u) << describe(c);
      EXPECT_LE(c.plan->batches.size(), size_t(kMaxSplitParts)) << describe(c);
      EXPECT_NE(s.values, ScaleValues::exact) << "exact sums would hide every combine";
      kinds.insert(s.plan_kind);
      max_parts = std::max<int64_t>(max_parts, int64_t(c.plan->batches.size()));
      max_rows = std::max(max_rows, c.rows);
      if (l.device == Device::cuda) max_dim = std::max(max_dim, c.dim);
    }
  EXPECT_EQ(kinds, (std::set<std::string>{"micro_batches", "ranks", "strided"}));
  EXPECT_GE(max_parts, 32);
  EXPECT_GT(max_rows, 65535);
  EXPECT_GE(max_dim, 3072);  // the models' dims on a GPU
  EXPECT_GT(max_elements, int64_t(1) << 31) << "a GPU with the memory draws splits past 2^31 elements";
}

// The many-gates rung draws a gate a row (or a third of them) at 65,536
// rows and more: for a split its gates are cut so that the row reductions
// and their states fit the host, its rows kept (seed 2's draws 24, 28 and 36
// on a GPU are such draws).
TEST(SplitAtScale, ManyGatesAreCutToWhatTheHostHolds) {
  ScaleLimits gpu;
  gpu.device = Device::cuda;
  gpu.max_elements = int64_t(1) << 34;
  gpu.memory_bytes = uint64_t(80) << 30;
  int cut = 0;
  for (int j : {24, 28, 36}) {
    const ScaleSpec s = draw_scale_case(2, "split_invariance", j, gpu);
    EXPECT_LE(s.gates * s.dim, kScaleSplitTableElements) << s.rows << " rows, " << s.gates << " gates, dim " << s.dim;
    if (s.rung != "many gates" || s.gates * s.dim <= kScaleSplitTableElements - s.dim) continue;
    ++cut;  // as many gates as fit, over all of its rows
    EXPECT_GE(s.rows, 65280) << "its rows kept";
  }
  EXPECT_GE(cut, 1) << "no many-gates draw had its gates cut";
}

TEST(SplitAtScale, NoExchangeFailsPast65535RowsAndHostReproPasses) {
  const ScaleCase c = big_split("ranks", 65537, 8, 11);
  ASSERT_GE(c.plan->batches.size(), 2u);
  const Verdict host = check_scale_property("split_invariance", make_implementation("host", Device::cpu), c);
  ASSERT_FALSE(host.passed);
  EXPECT_FALSE(host.vacuous);
  EXPECT_NE(host.message.find("ranks split into " + std::to_string(c.plan->batches.size()) + " parts"),
            std::string::npos) << host.message;
  EXPECT_NE(host.message.find("the first at ["), std::string::npos) << host.message;
  EXPECT_NE(host.message.find("rows=65537"), std::string::npos) << host.message;  // the scale case's head
  const Verdict repro = check_scale_property("split_invariance", make_implementation("host-repro", Device::cpu), c);
  EXPECT_TRUE(repro.passed) << repro.message;
  EXPECT_GT(repro.compared, 0);
}

TEST(SplitAtScale, AnExchangeThatLosesAPartFailsAtScale) {
  const ScaleCase c = big_split("micro_batches", 65537, 4, 21);
  const Subject good = make_subject(std::string("plugin:") + GC_REPRO_PLUGIN, Device::cpu);
  const Subject lossy = make_subject(std::string("plugin:") + GC_REPRO_LOSSY_PLUGIN, Device::cpu);
  EXPECT_TRUE(check_scale_property("split_invariance", good, c).passed);
  const Verdict v = check_scale_property("split_invariance", lossy, c);
  EXPECT_FALSE(v.passed);
  EXPECT_TRUE(breaks_claim(v, lossy.contract, c.dtype)) << v.message;
}

// The shrinker carries it: host's failure at 65,537 rows in 40-odd ranks
// shrinks to a small case, still a split (of fewer rows and parts), still
// failing on its explicit values.
TEST(SplitAtScale, TheFailureShrinksToASmallSplit) {
  const ScaleCase c = big_split("ranks", 65537, 4, 41);
  const Subject host = make_subject("host", Device::cpu);
  const Verdict v = check_scale_property("split_invariance", host, c);
  ASSERT_FALSE(v.passed);
  const ScaleShrinkResult r = shrink_scale_case(host, "split_invariance", c, v, ScaleCheckOptions{}, nullptr, 20);
  ASSERT_TRUE(r.small) << describe(r.minimal);
  EXPECT_LE(r.small->rows * r.small->dim, kSmallScaleElements);
  EXPECT_FALSE(check_property("split_invariance", host, *r.small).passed);
  ASSERT_TRUE(r.small->plan);
  EXPECT_TRUE(is_split_kind(r.small->plan->kind)) << r.small->plan->kind;
  EXPECT_LT(r.small->plan->batches.size(), c.plan->batches.size());
}

// At scale the values are generated where the implementation runs and only
// the row reductions come back; on the same values, made explicit, the
// small-case property gives the same verdict and the same first element.
TEST(SplitAtScale, AgreesWithThePropertyOnTheSameValues) {
  const Implementation host = make_implementation("host", Device::cpu);
  const Implementation repro = make_implementation("host-repro", Device::cpu);
  for (const std::string& kind : split_plan_kinds()) {
    const ScaleCase c = big_split(kind, 300, 5, 61);
    const Case m = materialise(c);
    const Verdict a = check_scale_property("split_invariance", host, c);
    const Verdict b = check_property("split_invariance", host, m);
    ASSERT_FALSE(a.passed) << kind;
    ASSERT_FALSE(b.passed) << kind;
    EXPECT_EQ(a.compared, b.compared) << kind;
    ASSERT_EQ(a.comparisons.size(), b.comparisons.size()) << kind;
    for (size_t i = 0; i < a.comparisons.size(); ++i) {
      EXPECT_EQ(a.comparisons[i].failed, b.comparisons[i].failed) << kind;
      const Mismatch &x = a.comparisons[i].first.front(), &y = b.comparisons[i].first.front();
      EXPECT_EQ(std::make_tuple(x.row, x.col, x.got_bits, x.want_bits), std::make_tuple(y.row, y.col, y.got_bits, y.want_bits))
          << kind;
    }
    EXPECT_TRUE(check_scale_property("split_invariance", repro, c).passed) << kind;
    EXPECT_TRUE(check_property("split_invariance", repro, m).passed) << kind;
  }
}

// The corpus carries a split at scale: a file of the spec (no values) reads
// back to the same split, which fails host again and passes host-repro.
TEST(SplitAtScale, AScaleFileKeepsItsSplit) {
  const ScaleCase c = big_split("strided", 65537, 2, 31);
  CaseFile f;
  f.scale = ScaleFileCase{c.spec, c.view};
  f.failure = FailureRecord{"host", "cpu", "split_invariance", "m", "r", false, {}};
  const CaseFile back = case_from_json(case_to_json(f), "<test>");
  ASSERT_TRUE(back.scale);
  EXPECT_EQ(back.scale->spec.plan_kind, "strided");
  const ScaleCase again = back.scale->make();
  ASSERT_TRUE(again.plan);
  EXPECT_EQ(again.plan->batches, c.plan->batches);
  EXPECT_FALSE(check_scale_property("split_invariance", make_implementation("host", Device::cpu), again).passed);
  EXPECT_TRUE(check_scale_property("split_invariance", make_implementation("host-repro", Device::cpu), again).passed);
}

}  // namespace
}  // namespace gatecheck
