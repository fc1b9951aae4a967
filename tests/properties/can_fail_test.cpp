// Every property can fail: a correct implementation (host) passes a case,
// and a hand-made implementation with one planted bug fails it, with evidence
// that names the tensor, the element and the reason.
#include <gtest/gtest.h>

#include "broken_impls.h"
#include "properties/checks/properties.h"
#include "properties/shrink/shrink.h"
#include "test_cases.h"

namespace gatecheck::testing {
namespace {

const Subject& host() {
  static const Subject h = make_subject("host", Device::cpu);
  return h;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// host passes, the broken one fails and breaks its claim; returns its verdict.
Verdict passes_then_fails(const std::string& property, Bug bug, const Case& c) {
  const Verdict good = check_property(property, host(), c);
  EXPECT_TRUE(good.passed) << evidence_text(good);
  const Subject bad = broken(bug);
  const Verdict v = check_property(property, bad, c);
  EXPECT_FALSE(v.passed) << property << " did not catch " << bug_name(bug) << " on " << describe(c);
  EXPECT_EQ(v.property, property);
  EXPECT_TRUE(breaks_claim(v, bad.contract, c.dtype));
  EXPECT_FALSE(v.message.empty());
  EXPECT_TRUE(contains(evidence_text(v), property)) << evidence_text(v);
  return v;
}

TEST(PropertyCanFail, AccuracyNamesTheBadElement) {
  for (DType t : {DType::bf16, DType::f16, DType::f32}) {
    const Case c = hand_case(t, 5, 7, 2, {0, 1, 1, 0, 1});
    const Verdict v = passes_then_fails("accuracy", Bug::out_off_by_much, c);
    ASSERT_EQ(v.failed_outputs, std::vector<std::string>{"out"});
    ASSERT_EQ(v.comparisons.size(), 1u);
    EXPECT_EQ(v.comparisons[0].failed, 1);
    const Mismatch& m = v.comparisons[0].first.at(0);
    EXPECT_EQ(m.tensor, "out");
    EXPECT_EQ(m.row, 4);
    EXPECT_EQ(m.col, 6);
    EXPECT_TRUE(contains(v.message, "out")) << v.message;
    EXPECT_TRUE(contains(v.message, "bound")) << v.message;
  }
}

TEST(PropertyCanFail, RowInvarianceSeesABatchSizeDependentRow) {
  Case c = hand_case(DType::bf16, 4, 5, 2, {0, 1, 0, 1});
  c.plan = plan_of("singletons", {{0}, {1}, {2}, {3}});
  const Verdict v = passes_then_fails("row_invariance", Bug::odd_batch_flip, c);
  ASSERT_EQ(v.failed_outputs, std::vector<std::string>{"out"});
  const Mismatch& m = v.comparisons.at(0).first.at(0);
  EXPECT_EQ(m.row, 0);
  EXPECT_EQ(m.col, 0);
  EXPECT_NE(m.got_bits, m.want_bits);
  EXPECT_TRUE(contains(m.why, "batch 0 (1 rows)")) << m.why;
  EXPECT_EQ(v.compared, 4);
}

// The evidence names its sides by what they are (either may be the wrong
// one), and gives the first and last bad element in index order even when
// the plan runs the rows backwards.
TEST(PropertyCanFail, InvarianceEvidenceNamesItsSidesAndOrdersItsExtent) {
  Case c = hand_case(DType::bf16, 4, 5, 2, {0, 1, 0, 1});
  c.plan = plan_of("singletons", {{3}, {2}, {1}, {0}});
  const Verdict v = passes_then_fails("row_invariance", Bug::odd_batch_flip, c);
  const std::string e = evidence_text(v);
  EXPECT_TRUE(contains(e, "(first [0,0], last [3,0])")) << e;
  EXPECT_TRUE(contains(e, ": sub-batch 0x")) << e;
  EXPECT_TRUE(contains(e, ", full batch 0x")) << e;
  EXPECT_TRUE(contains(v.message, "sub-batch 0x")) << v.message;
  EXPECT_TRUE(contains(v.message, " vs full batch 0x")) << v.message;
  EXPECT_FALSE(contains(e, "want")) << e;
  EXPECT_FALSE(contains(e, "got")) << e;
}

TEST(PropertyCanFail, SegmentInvarianceSeesASmallBatchPath) {
  Case c = hand_case(DType::f32, 6, 3, 3, {0, 0, 1, 1, 2, 2});
  c.plan = plan_of("partition", {{0, 1}, {2, 3, 4, 5}});
  const Verdict v = passes_then_fails("segment_invariance", Bug::small_batch_grad_gate, c);
  ASSERT_EQ(v.failed_outputs, std::vector<std::string>{"grad_gate"});
  const Mismatch& m = v.comparisons.at(0).first.at(0);
  EXPECT_EQ(m.row, 0);  // index 0's rows
  EXPECT_TRUE(contains(m.why, "index 0")) << m.why;
  EXPECT_EQ(v.compared, 3);  // gates 0, 1, 2 each whole in one batch
}

TEST(PropertyCanFail, RepeatableSeesAFlakyReduction) {
  const Case c = hand_case(DType::bf16, 8, 4, 2, {0, 0, 0, 1, 1, 1, 0, 1});
  const Verdict v = passes_then_fails("repeatable", Bug::flaky_grad_gate, c);
  ASSERT_EQ(v.failed_outputs, std::vector<std::string>{"grad_gate"});
  EXPECT_TRUE(contains(v.comparisons.at(0).first.at(0).why, "vs call 1")) << v.comparisons[0].first[0].why;
}

TEST(PropertyCanFail, InputsUntouchedSeesAWrittenInput) {
  const Case c = hand_case(DType::f16, 3, 4, 2, {1, 0, 1});
  const Verdict v = passes_then_fails("inputs_untouched", Bug::writes_y, c);
  ASSERT_EQ(v.memory.size(), 1u);
  EXPECT_EQ(v.memory[0].tensor, "y");
  EXPECT_EQ(v.memory[0].kind, MemoryFinding::input_changed);
  EXPECT_TRUE(v.failed_outputs.empty());  // an input is no output: the whole property fails
}

TEST(PropertyCanFail, FullWriteSeesAnUnwrittenElement) {
  const Case c = hand_case(DType::bf16, 3, 4, 2, {1, 0, 1});
  const Verdict v = passes_then_fails("full_write", Bug::skips_last_grad_y, c);
  ASSERT_EQ(v.failed_outputs, std::vector<std::string>{"grad_y"});
  ASSERT_EQ(v.memory.size(), 1u);
  EXPECT_EQ(v.memory[0].count, 1);
  EXPECT_EQ(v.memory[0].first, 11);
  EXPECT_TRUE(contains(v.memory[0].detail, "[2, 3]")) << v.memory[0].detail;
}

TEST(PropertyCanFail, NoOobWriteSeesAWritePastTheEnd) {
  const Case c = hand_case(DType::f32, 3, 4, 2, {1, 0, 1});
  const Verdict v = passes_then_fails("no_oob_write", Bug::writes_past_out, c);
  ASSERT_EQ(v.failed_outputs, std::vector<std::string>{"out"});
  EXPECT_EQ(v.memory.at(0).kind, MemoryFinding::oob_write);
}

TEST(PropertyCanFail, ErrorInputsSeesAnAcceptedBadIndex) {
  const Case c = hand_case(DType::bf16, 4, 3, 2, {0, 1, 1, 0});
  const Verdict v = passes_then_fails("error_inputs", Bug::accepts_bad_index, c);
  EXPECT_TRUE(contains(v.message, "index out of range (index[2] = 2")) << v.message;
  EXPECT_TRUE(contains(v.message, "accepted it")) << v.message;
  EXPECT_GE(v.compared, 20);
}

TEST(PropertyCanFail, ErrorInputsSeesAMessageThatNamesNothing) {
  const Case c = hand_case(DType::bf16, 4, 3, 2, {0, 1, 1, 0});
  const Verdict v = passes_then_fails("error_inputs", Bug::vague_errors, c);
  EXPECT_TRUE(contains(v.message, "does not name")) << v.message;
  // Every probe fails; the first six are named, and the rest counted.
  const size_t of = v.message.find(" of " + std::to_string(v.compared) + " bad inputs");
  ASSERT_NE(of, std::string::npos) << v.message;
  const long failed = std::stol(v.message.substr(v.message.rfind(' ', of - 1) + 1));
  EXPECT_GT(failed, 6) << v.message;
  EXPECT_TRUE(contains(v.message, "; and " + std::to_string(failed - 6) + " more")) << v.message;
}

// error_inputs runs its probes in a child process: a plugin that dies on a
// bad index is reported, with the probe that killed it, and this process lives.
TEST(PropertyCanFail, ErrorInputsSurvivesACrashingImplementation) {
  const Case c = hand_case(DType::f32, 4, 3, 2, {0, 1, 1, 0});
  const Verdict v = passes_then_fails("error_inputs", Bug::crashes_on_bad_index, c);
  EXPECT_TRUE(contains(v.message, "index out of range (index[2] = 2")) << v.message;
  EXPECT_TRUE(contains(v.message, "did not return")) << v.message;
  EXPECT_TRUE(contains(v.message, "SIGSEGV")) << v.message;
  EXPECT_FALSE(contains(v.message, "null res")) << v.message;  // only the index probes died
}

// Shrinking's candidates only ask whether error_inputs still fails: with
// name_probes off, a dead child is a failure at once, marked unnamed, and no
// probe runs alone; with it on (the default), the probe that killed it is named.
TEST(PropertyCanFail, ErrorInputsNamesTheCulpritOnlyWhenAsked) {
  const Case c = hand_case(DType::f32, 4, 3, 2, {0, 1, 1, 0});
  PropertyOptions quick;
  quick.name_probes = false;
  const Verdict v = check_property("error_inputs", broken(Bug::crashes_on_bad_index), c, quick);
  EXPECT_FALSE(v.passed);
  EXPECT_TRUE(v.probes_unnamed);
  EXPECT_TRUE(breaks_claim(v, broken(Bug::crashes_on_bad_index).contract, c.dtype));
  EXPECT_TRUE(contains(v.message, "bad-input probes did not return")) << v.message;
  EXPECT_FALSE(contains(v.message, "index out of range")) << v.message;  // no probe named
  const Verdict named = check_property("error_inputs", broken(Bug::crashes_on_bad_index), c);
  EXPECT_FALSE(named.probes_unnamed);
  EXPECT_TRUE(contains(named.message, "index out of range (index[2] = 2")) << named.message;
  // a correct implementation passes either way
  EXPECT_TRUE(check_property("error_inputs", host(), c, quick).passed);
}

// shrink_case runs its candidates unnamed and names the minimal case's probes.
TEST(PropertyCanFail, ShrinkingACrashNamesTheMinimalCasesProbes) {
  const Case c = hand_case(DType::f32, 6, 5, 3, {0, 1, 2, 1, 0, 2});
  const ShrinkResult r = shrink_case(broken(Bug::crashes_on_bad_index), "error_inputs", c);
  EXPECT_GT(r.steps, 0);
  EXPECT_FALSE(r.verdict.passed);
  EXPECT_FALSE(r.verdict.probes_unnamed);
  EXPECT_TRUE(contains(r.verdict.message, "index out of range")) << r.verdict.message;
  EXPECT_TRUE(contains(r.verdict.message, "SIGSEGV")) << r.verdict.message;
}

// error_inputs probes a small valid problem in place of a case with no rows or columns. Shrunk
// from such a case, the minimal case is a problem the probes ran on as it is (it was rows=0, with
// evidence about rows=3 dim=4 gates=2), and no candidate on the way has no rows.
TEST(PropertyCanFail, ShrinkingErrorInputsEndsOnTheProblemItProbed) {
  const Case empty = hand_case(DType::f32, 5, 0, 2, {0, 1, 1, 0, 1});
  ASSERT_FALSE(check_property("error_inputs", broken(Bug::accepts_bad_index), empty).passed);
  const ShrinkResult r = shrink_case(broken(Bug::accepts_bad_index), "error_inputs", empty);
  EXPECT_FALSE(r.verdict.passed);
  EXPECT_GE(r.minimal.rows, 1);
  EXPECT_GE(r.minimal.dim, 1);
  EXPECT_GE(r.minimal.gates, 1);
  EXPECT_TRUE(contains(r.verdict.message, describe(r.minimal).substr(0, 20))) << describe(r.minimal) << "\n"
                                                                              << r.verdict.message;
  // a case the probes can carry shrinks as before, and never to an empty one
  const ShrinkResult s = shrink_case(broken(Bug::accepts_bad_index), "error_inputs",
                                     hand_case(DType::f32, 6, 5, 3, {0, 1, 2, 1, 0, 2}));
  EXPECT_GE(s.minimal.rows, 1);
  EXPECT_GE(s.minimal.dim, 1);
}

// With PropertyOptions::isolate every call runs in a child process: a crash on
// valid input fails the property instead of killing the run.
TEST(PropertyCanFail, IsolatedPropertiesReportACrash) {
  const Case c = hand_case(DType::bf16, 4, 3, 2, {0, 1, 1, 0});
  PropertyOptions iso;
  iso.isolate = true;
  iso.isolate_timeout_seconds = 20;
  for (const char* p : {"accuracy", "row_invariance", "repeatable", "full_write"}) {
    const Verdict v = check_property(p, broken(Bug::crashes_always), c, iso);
    EXPECT_FALSE(v.passed) << p;
    EXPECT_TRUE(contains(v.message, "SIGSEGV")) << p << ": " << v.message;
    EXPECT_TRUE(check_property(p, host(), c, iso).passed) << p;
  }
}

TEST(PropertyCanFail, EagerExactSeesAFusedForward) {
  const Case c = hand_case(DType::f32, 64, 64, 4, make_index("uniform", 64, 4, 3), 11, "mixed_magnitude");
  const Verdict v = passes_then_fails("eager_exact", Bug::fused_forward, c);
  ASSERT_EQ(v.failed_outputs, std::vector<std::string>{"out"});
}

TEST(PropertyCanFail, EmptyProblemsPassOnHost) {
  for (auto [rows, dim] : {std::pair<int64_t, int64_t>{0, 4}, {3, 0}, {0, 0}}) {
    const Case c = hand_case(DType::bf16, rows, dim, 2, std::vector<int64_t>(size_t(rows), 1));
    for (const char* p : {"accuracy", "repeatable", "inputs_untouched", "full_write", "no_oob_write", "error_inputs"}) {
      const Verdict v = check_property(p, host(), c);
      EXPECT_TRUE(v.passed) << describe(c) << "\n" << evidence_text(v);
    }
  }
}

TEST(BreaksClaim, FollowsTheContractPerOutputAndDtype) {
  Contract k = Contract::everything();
  k.exceptions.push_back({"accuracy:grad_gate", {DType::bf16, DType::f16}, "accumulates in the dtype"});
  Verdict gg;
  gg.property = "accuracy";
  gg.passed = false;
  gg.failed_outputs = {"grad_gate"};
  EXPECT_FALSE(breaks_claim(gg, k, DType::bf16));
  EXPECT_TRUE(breaks_claim(gg, k, DType::f32));
  Verdict out = gg;
  out.failed_outputs = {"out"};
  EXPECT_TRUE(breaks_claim(out, k, DType::bf16));
  Verdict whole = gg;
  whole.failed_outputs = {};
  EXPECT_TRUE(breaks_claim(whole, k, DType::bf16));  // a crash breaks the claim on the other outputs
  Verdict ok = gg;
  ok.passed = true;
  EXPECT_FALSE(breaks_claim(ok, k, DType::f32));
  EXPECT_THROW(check_property("no_such_property", host(), hand_case(DType::f32, 1, 1, 1, {0})),
               std::invalid_argument);
}

}  // namespace
}  // namespace gatecheck::testing
