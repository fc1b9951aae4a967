// The vacuity guards: an invariance property whose plan moved nothing, or
// compared nothing, fails, even on a correct implementation.
#include <gtest/gtest.h>

#include "case/plan_movement.h"
#include "properties/checks/properties.h"
#include "test_cases.h"

namespace gatecheck::testing {
namespace {

const Subject& host() {
  static const Subject h = make_subject("host", Device::cpu);
  return h;
}
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(Vacuity, RowInvarianceFailsWhenThePlanKeepsEveryRowInPlace) {
  Case c = hand_case(DType::bf16, 4, 3, 2, {0, 1, 0, 1});
  c.plan = plan_of("partition", {{0, 1, 2, 3}});  // the full batch again: nothing moved
  const Verdict v = check_property("row_invariance", host(), c);
  EXPECT_FALSE(v.passed);
  EXPECT_TRUE(contains(v.message, "vacuous")) << v.message;
  EXPECT_TRUE(v.failed_outputs.empty());
  EXPECT_TRUE(breaks_claim(v, host().contract, c.dtype));
}

TEST(Vacuity, RowInvarianceFailsWhenRowsMoveButBatchSizesDoNot) {
  Case c = hand_case(DType::bf16, 4, 3, 2, {0, 1, 0, 1});
  c.plan = plan_of("reversal", {{3, 2, 1, 0}});  // offsets move, the size is the full batch's
  const Verdict v = check_property("row_invariance", host(), c);
  EXPECT_FALSE(v.passed);
  EXPECT_TRUE(contains(v.message, "different size")) << v.message;
}

TEST(Vacuity, RowInvarianceFailsWhenSizesChangeButNoRowMoves) {
  Case c = hand_case(DType::bf16, 4, 3, 2, {0, 1, 0, 1});
  c.plan = plan_of("partition", {{0, 1}, {0}});  // smaller batches, every row at its own offset
  const Verdict v = check_property("row_invariance", host(), c);
  EXPECT_FALSE(v.passed);
  EXPECT_TRUE(contains(v.message, "different offset")) << v.message;
}

TEST(Vacuity, RowInvarianceFailsWhenNothingIsCompared) {
  Case c = hand_case(DType::bf16, 4, 3, 2, {0, 1, 0, 1});
  c.plan = plan_of("partition", {});
  const Verdict v = check_property("row_invariance", host(), c);
  EXPECT_FALSE(v.passed);
  EXPECT_TRUE(contains(v.message, "compared nothing")) << v.message;
  EXPECT_EQ(v.compared, 0);
}

TEST(Vacuity, RowInvariancePassesWhenRowsReallyMove) {
  Case c = hand_case(DType::bf16, 4, 3, 2, {0, 1, 0, 1});
  c.plan = plan_of("partition", {{0, 1}, {2, 3}});
  const Verdict v = check_property("row_invariance", host(), c);
  EXPECT_TRUE(v.passed) << evidence_text(v);
  EXPECT_EQ(v.compared, 4);
}

TEST(Vacuity, SegmentInvarianceFailsWhenNoWholeSegmentMoves) {
  Case c = hand_case(DType::f32, 4, 3, 1, {0, 0, 0, 0});  // one gate holds every row
  c.plan = plan_of("partition", {{0, 1}, {2, 3}});
  Verdict v = check_property("segment_invariance", host(), c);
  EXPECT_FALSE(v.passed);
  EXPECT_TRUE(contains(v.message, "compared nothing")) << v.message;

  c = hand_case(DType::f32, 4, 3, 2, {0, 0, 1, 1});
  c.plan = plan_of("partition", {{0, 1}});  // gate 0 whole, but at its own offsets
  v = check_property("segment_invariance", host(), c);
  EXPECT_FALSE(v.passed);
  EXPECT_TRUE(contains(v.message, "different offset")) << v.message;

  c.plan = plan_of("partition", {{2, 3}});  // gate 1 whole and moved to offset 0
  v = check_property("segment_invariance", host(), c);
  EXPECT_TRUE(v.passed) << evidence_text(v);
}

TEST(Vacuity, SegmentNeedsEveryRowOnceInOrder) {
  const Case c = hand_case(DType::f32, 5, 2, 2, {0, 1, 0, 1, 0});
  const auto by_gate = rows_by_gate(c);
  EXPECT_EQ(whole_segments(by_gate, c, {0, 2, 4}), std::vector<int64_t>{0});
  EXPECT_TRUE(whole_segments(by_gate, c, {2, 0, 4}).empty());     // out of order
  EXPECT_TRUE(whole_segments(by_gate, c, {0, 2, 4, 4}).empty());  // a row twice
  EXPECT_TRUE(whole_segments(by_gate, c, {0, 2}).empty());        // a row missing
}

TEST(Vacuity, GeneratedPlansMoveRowsAndTheDefaultPlanToo) {
  const Case c = hand_case(DType::f32, 9, 2, 3, make_index("uniform", 9, 3, 5));
  for (const auto& kind : all_plan_kinds()) {
    Case k = c;
    k.plan = make_plan(kind, c, 3);
    EXPECT_TRUE(row_movement(k, *k.plan).ok()) << kind << ": " << row_movement(k, *k.plan).why_vacuous();
  }
  Case g = c;
  g.plan = make_plan("gate_groups", c, 4);
  EXPECT_TRUE(segment_movement(g, *g.plan).ok()) << segment_movement(g, *g.plan).why_vacuous();
  EXPECT_TRUE(row_movement(c, default_plan(c)).ok());
  EXPECT_TRUE(segment_movement(c, default_plan(c)).ok());
  // Without a plan the properties use the default one, and it is not vacuous.
  EXPECT_TRUE(check_property("row_invariance", host(), c).passed);
  EXPECT_TRUE(check_property("segment_invariance", host(), c).passed);
}

TEST(Vacuity, OneRowCannotMove) {
  const Case c = hand_case(DType::f32, 1, 2, 1, {0});
  const Verdict v = check_property("row_invariance", host(), c);
  EXPECT_FALSE(v.passed);
  EXPECT_TRUE(contains(v.message, "vacuous")) << v.message;
  EXPECT_FALSE(plan_moves_rows("row_invariance", c));
}

TEST(Vacuity, MalformedPlanIsReported) {
  Case c = hand_case(DType::f32, 3, 2, 1, {0, 0, 0});
  c.plan = plan_of("partition", {{0, 7}});
  const Verdict v = check_property("row_invariance", host(), c);
  EXPECT_FALSE(v.passed);
  EXPECT_TRUE(contains(v.message, "names row 7")) << v.message;
}

}  // namespace
}  // namespace gatecheck::testing
