// Shrinking at scale (properties/shrink_scale.h): a failure found past 65,536
// rows shrinks by binary searches and block deletions to the smallest case
// that still fails, and is written as a replayable file: the spec and view
// where it stays large, explicit values once small.
#include <gtest/gtest.h>

#include "case/case_json.h"
#include "properties/scale/shrink_scale.h"
#include "tests/properties/broken_impls.h"
#include "tests/scale/test_scale_spec.h"

namespace gatecheck {
namespace {

ScaleCase drawn(int64_t rows, int64_t dim, int64_t gates, const std::string& plan = "partition",
                const std::string& pattern = "uniform") {
  return make_scale_case(test::scale_spec(31, DType::bf16, rows, dim, gates, ScaleValues::rounding, pattern, 0, plan));
}

// The grid-limit bug needs 65,536 rows to show; the shrinker finds exactly
// that many, one column and one gate, and the file replays it.
TEST(ScaleShrink, GridLimitShrinksTo65536By1) {
  const Subject grid = make_subject(std::string("plugin:") + GC_SCALE_GRID_LIMIT, Device::cpu);
  const ScaleCase c = drawn(131072, 5, 9);
  const Verdict v = check_scale_property("full_write", grid, c);
  ASSERT_FALSE(v.passed);
  int steps = 0;
  const ScaleShrinkResult r = shrink_scale_case(grid, "full_write", c, v, {}, [&](const std::string&) { ++steps; }, 300);
  EXPECT_FALSE(r.cut_short);
  EXPECT_FALSE(r.small);  // 65,536 elements: still a scale case
  EXPECT_EQ(r.minimal.rows, 65536);
  EXPECT_EQ(r.minimal.dim, 1);
  EXPECT_EQ(r.minimal.gates, 1);
  EXPECT_FALSE(r.verdict.passed);
  EXPECT_EQ(steps, r.steps);
  EXPECT_LT(r.attempts, 200) << "binary searches, not row-by-row deletion";
  // the file: spec + view, a few hundred bytes, and it still fails
  CaseFile f;
  f.scale = ScaleFileCase{r.minimal.spec, r.minimal.view};
  const std::string text = case_to_json(f);
  EXPECT_LT(text.size(), 3000u);
  const CaseFile back = case_from_json(text, "<test>");
  const ScaleCase replay = back.scale->make();
  EXPECT_EQ(replay.rows, 65536);
  EXPECT_FALSE(check_scale_property("full_write", grid, replay).passed);
  EXPECT_TRUE(check_scale_property("full_write", make_subject("host", Device::cpu), replay).passed);
}

// Unused gates dropped, then the used ones merged (each edit renumbers the
// gates): the merge must see the new numbering. Found as a heap overflow.
TEST(ScaleShrink, DropsUnusedThenMergesGates) {
  const Subject grid = make_subject(std::string("plugin:") + GC_SCALE_GRID_LIMIT, Device::cpu);
  const ScaleCase c = drawn(65537, 3, 700, "singletons", "unused_gates");
  const Verdict v = check_scale_property("full_write", grid, c);
  ASSERT_FALSE(v.passed);
  const ScaleShrinkResult r = shrink_scale_case(grid, "full_write", c, v, {}, nullptr, 300);
  EXPECT_EQ(r.minimal.rows, 65536);
  EXPECT_EQ(r.minimal.dim, 1);
  EXPECT_EQ(r.minimal.gates, 1);
}

// A bug that any one element shows: the scale shrinker gets it small, and it
// becomes an ordinary case with explicit values that still fails.
TEST(ScaleShrink, SmallFailuresBecomeOrdinaryCases) {
  const Subject bad = testing::broken(testing::Bug::out_off_by_much);
  const ScaleCase c = drawn(70000, 4, 3);
  const Verdict v = check_scale_property("accuracy", bad, c);
  ASSERT_FALSE(v.passed);
  const ScaleShrinkResult r = shrink_scale_case(bad, "accuracy", c, v, {}, nullptr, 300);
  ASSERT_TRUE(r.small);
  EXPECT_EQ(r.small->rows, 1);
  EXPECT_EQ(r.small->dim, 1);
  EXPECT_FALSE(check_property("accuracy", bad, *r.small).passed);
}

// A candidate that fails only as vacuous never stands in for a real failure.
TEST(ScaleShrink, KeepsTheSameFailure) {
  const Subject grid = make_subject(std::string("plugin:") + GC_SCALE_GRID_LIMIT, Device::cpu);
  const ScaleCase c = drawn(65537, 2, 3, "reversal");
  const Verdict v = check_scale_property("row_invariance", grid, c);
  ASSERT_FALSE(v.passed);
  ASSERT_FALSE(v.vacuous);
  const ScaleShrinkResult r = shrink_scale_case(grid, "row_invariance", c, v, {}, nullptr, 300);
  EXPECT_FALSE(r.verdict.vacuous);
  EXPECT_GE(r.minimal.rows, 65536);
}

TEST(ScaleShrink, ViewEditsCompose) {
  const ScaleCase c = drawn(1000, 6, 4);
  const ScaleCase a = make_scale_case(c.spec, view_keep_rows(c, {2, 3, 500}));
  const ScaleCase b = make_scale_case(a.spec, view_keep_rows(a, {0, 2}));
  EXPECT_EQ(b.view.rows, (std::vector<int64_t>{2, 500}));
  EXPECT_EQ(b.index[1], c.index[500]);
  const ScaleCase d = make_scale_case(b.spec, view_keep_cols(b, {1, 5}));
  EXPECT_EQ(d.bits(kScaleY, 1, 1), c.bits(kScaleY, 500, 5));
  // merge gate of row 1 into the gate of row 0; drop the rest
  std::vector<bool> keep(size_t(d.gates), false);
  std::vector<int64_t> into(size_t(d.gates));
  for (int64_t k = 0; k < d.gates; ++k) into[size_t(k)] = d.index[0];
  keep[size_t(d.index[0])] = true;
  const ScaleCase m = make_scale_case(d.spec, view_keep_gates(d, keep, into));
  EXPECT_EQ(m.gates, 1);
  EXPECT_EQ(m.index, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(m.bits(kScaleGate, 0, 0), d.bits(kScaleGate, d.index[0], 0));
}

}  // namespace
}  // namespace gatecheck
