// The shrinker on its own: driven by a differential predicate (a planted
// mutant differs from the host twin) and by synthetic predicates that
// exercise each kind of edit.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>

#include "differential.h"
#include "properties/mutants/mutant_implementations.h"
#include "properties/shrink/shrink.h"
#include "properties/shrink/shrink_edits.h"
#include "random_case.h"

namespace gatecheck {
namespace {

using testing::differs_from_host;
using testing::random_case;

Subject mutant(const std::string& name) {
  for (auto& m : planted_mutants())
    if (m.name == name) return m;
  throw std::invalid_argument("no mutant " + name);
}

// Every value of every input tensor is a small integer (|v| <= limit) or a zero.
bool values_are_small_integers(const Case& c, float limit) {
  for (const HostTensor* t : {&c.input("res"), &c.input("gate"), &c.input("y"), &c.input("grad_out")})
    for (int64_t i = 0; i < t->numel(); ++i) {
      const float v = t->value(i);
      if (!(v == std::trunc(v) && std::fabs(v) <= limit)) return false;
    }
  return true;
}

struct Shrunk {
  ShrinkResult r;
  std::vector<std::string> log;
};

Shrunk shrink_against_host(const Subject& impl, const Case& c) {
  Shrunk s;
  s.r = shrink_case_with(c, [&](const Case& k) { return differs_from_host(impl, k); },
                         [&](const std::string& line) { s.log.push_back(line); });
  return s;
}

TEST(Shrink, TailBugShrinksToOneRowOneColumnTwoGates) {
  const auto m = mutant("mutant:tail-columns");
  const Case c = random_case(11, DType::bf16, 37, 29, 5);
  ASSERT_TRUE(differs_from_host(m, c)) << "the starting case must fail";
  const Shrunk s = shrink_against_host(m, c);
  EXPECT_TRUE(differs_from_host(m, s.r.minimal));
  EXPECT_EQ(s.r.minimal.rows, 1);
  EXPECT_EQ(s.r.minimal.dim, 1);
  EXPECT_EQ(s.r.minimal.gates, 2);  // the row must use a gate other than row 0
  EXPECT_TRUE(values_are_small_integers(s.r.minimal, 2)) << describe(s.r.minimal);
  EXPECT_FALSE(s.r.cut_short);
  EXPECT_GT(s.r.steps, 0);
  EXPECT_GE(s.r.attempts, s.r.steps);
  ASSERT_EQ(int(s.log.size()), s.r.steps);
  EXPECT_NE(s.log.front().find("shrink step 1"), std::string::npos) << s.log.front();
}

TEST(Shrink, IsDeterministic) {
  const auto m = mutant("mutant:tail-columns");
  const Case c = random_case(12, DType::f32, 23, 13, 4);
  const Shrunk a = shrink_against_host(m, c), b = shrink_against_host(m, c);
  EXPECT_TRUE(a.r.minimal == b.r.minimal);
  EXPECT_EQ(a.r.steps, b.r.steps);
  EXPECT_EQ(a.r.attempts, b.r.attempts);
  EXPECT_EQ(a.log, b.log);
}

TEST(Shrink, SkippedRowShrinksToOneRow) {
  const auto m = mutant("mutant:skipped-row");
  const Case c = random_case(13, DType::f16, 33, 10, 3);
  const Shrunk s = shrink_against_host(m, c);
  EXPECT_TRUE(differs_from_host(m, s.r.minimal));
  EXPECT_EQ(s.r.minimal.rows, 1);
  EXPECT_LE(s.r.minimal.dim, 1);
  EXPECT_EQ(s.r.minimal.gates, 1);
}

TEST(Shrink, KeepsTheUnusedGateAnUnwrittenGateBugNeeds) {
  const auto m = mutant("mutant:unwritten-unused-gate");
  Case c = random_case(14, DType::f32, 9, 6, 7);
  for (auto& k : c.index) k = k % 3;  // gates 3..6 unused
  ASSERT_TRUE(differs_from_host(m, c));
  const Shrunk s = shrink_against_host(m, c);
  EXPECT_TRUE(differs_from_host(m, s.r.minimal));
  EXPECT_EQ(s.r.minimal.rows, 0);   // with no rows every gate is unused
  EXPECT_EQ(s.r.minimal.gates, 1);
  EXPECT_EQ(s.r.minimal.dim, 1);
}

// Whatever the mutant, the result still fails: the shrinker never returns a
// passing case. (The shuffled-accumulation mutant is left out: against the
// host its failure depends on a call counter, so no predicate is stable.)
TEST(Shrink, NeverReturnsAPassingCase) {
  for (const auto& m : planted_mutants()) {
    if (m.name == "mutant:shuffled-accumulation") continue;
    Case c = random_case(15, DType::f32, 71, 11, 5);  // odd rows
    for (auto& k : c.index)
      if (k == 3) k = 4;                               // gate 3 unused, the last gate used
    c.index[0] = 0;
    c.input("gate").set_value_rn(0, NAN);     // a NaN gate value at [0, 0]...
    c.input("y").set_value_rn(0, 0.0f);       // ...with y == +0 there (the y == 0 shortcut)
    c.input("grad_out").set_value_rn(1, 1e-40f);  // subnormal g at [0, 1]...
    c.input("gate").set_value_rn(1, 1.0f);        // ...times gate 1: grad_y subnormal
    if (!differs_from_host(m, c)) {
      ADD_FAILURE() << m.name << ": the starting case does not trigger the bug";
      continue;
    }
    const Shrunk s = shrink_against_host(m, c);
    EXPECT_TRUE(differs_from_host(m, s.r.minimal)) << m.name << ": shrunk to a passing case";
    EXPECT_FALSE(s.r.cut_short) << m.name;
    EXPECT_LE(s.r.minimal.rows, c.rows) << m.name;
    EXPECT_LE(s.r.minimal.dim, c.dim) << m.name;
    RecordProperty(m.name, describe(s.r.minimal));
  }
}

TEST(Shrink, SimplifiesTheBatchPlan) {
  Case c = random_case(16, DType::f32, 12, 3, 2);
  c.plan = BatchPlan{"partition", {{0, 1, 2}, {3, 4, 5, 6}, {7}, {8, 9, 10, 11}}, 0};
  // Fails while some batch holds at least two rows.
  auto pred = [](const Case& k) {
    if (!k.plan) return false;
    for (const auto& b : k.plan->batches)
      if (b.size() >= 2) return true;
    return false;
  };
  const ShrinkResult r = shrink_case_with(c, pred);
  ASSERT_TRUE(r.minimal.plan.has_value());
  EXPECT_EQ(r.minimal.rows, 2);
  ASSERT_EQ(r.minimal.plan->batches.size(), 1u);
  EXPECT_EQ(r.minimal.plan->batches[0], (std::vector<int64_t>{0, 1}));
}

TEST(Shrink, RowRemovalKeepsThePlanConsistent) {
  Case c = random_case(17, DType::f32, 6, 2, 2);
  c.plan = BatchPlan{"permutation", {{5, 3, 1}, {4, 2, 0}}, 0};
  std::vector<bool> drop = {true, false, false, true, false, false};
  const Case s = without_rows(c, drop);
  ASSERT_EQ(s.rows, 4);
  ASSERT_TRUE(s.plan.has_value());
  // old rows 1,2,4,5 become 0,1,2,3
  EXPECT_EQ(s.plan->batches, (std::vector<std::vector<int64_t>>{{3, 0}, {2, 1}}));
  EXPECT_EQ(s.index, (std::vector<int64_t>{c.index[1], c.index[2], c.index[4], c.index[5]}));
  EXPECT_EQ(s.input("y").bits(0), c.input("y").bits(2));  // row 1, column 0
}

TEST(Shrink, FewerRepeats) {
  Case c = random_case(22, DType::f32, 3, 2, 1);
  c.plan = BatchPlan{"repeat", {}, 5};
  const ShrinkResult r = shrink_case_with(c, [](const Case& k) { return k.plan && k.plan->repeats >= 1; });
  ASSERT_TRUE(r.minimal.plan.has_value());
  EXPECT_EQ(r.minimal.plan->repeats, 1);
  EXPECT_EQ(r.minimal.rows, 0);  // the predicate does not need rows
}

TEST(Shrink, ColumnRemovalCutsEveryTensorAlike) {
  const Case c = random_case(23, DType::bf16, 2, 3, 2);
  const Case s = without_columns(c, {true, false, true});  // keep column 1
  ASSERT_EQ(s.dim, 1);
  for (int64_t r = 0; r < 2; ++r) {
    EXPECT_EQ(s.input("res").bits(r), c.input("res").bits(r * 3 + 1));
    EXPECT_EQ(s.input("y").bits(r), c.input("y").bits(r * 3 + 1));
    EXPECT_EQ(s.input("grad_out").bits(r), c.input("grad_out").bits(r * 3 + 1));
    EXPECT_EQ(s.input("gate").bits(r), c.input("gate").bits(r * 3 + 1));  // gate rows are gates, 2 here
  }
}

TEST(Shrink, MergesAndDropsGates) {
  Case c = random_case(18, DType::f32, 6, 2, 4);
  c.index = {3, 1, 3, 1, 0, 0};
  const Case m = with_gate_merged(c, 3, 1);
  EXPECT_EQ(m.gates, 3);
  EXPECT_EQ(m.index, (std::vector<int64_t>{1, 1, 1, 1, 0, 0}));
  EXPECT_THROW(without_gates(c, {false, true, false, false}), std::invalid_argument);  // gate 1 used
  const Case d = without_gates(c, {false, false, true, false});                        // gate 2 unused
  EXPECT_EQ(d.index, (std::vector<int64_t>{2, 1, 2, 1, 0, 0}));
  EXPECT_EQ(d.input("gate").bits(2 * 2), c.input("gate").bits(3 * 2));
}

// An index outside the gate table stays outside it when gates are dropped
// (it used to be looked up in the new-id table: an out-of-bounds read that a
// shrink of such a corpus file turned into garbage such as index 544).
TEST(Shrink, DroppingGatesKeepsBadIndicesBad) {
  Case c = random_case(19, DType::f32, 4, 2, 4);
  c.index = {-2, 1, 7, 4};
  const Case d = without_gates(c, {true, false, true, true});  // only gate 1 is used
  EXPECT_EQ(d.gates, 1);
  EXPECT_EQ(d.index, (std::vector<int64_t>{-2, 0, 4, 1}));  // 7 and 4 past 4 gates: past 1 gate by as much
  EXPECT_NE(case_input_problem(d), "");
  EXPECT_EQ(case_input_problem(c), "case: index[0] = -2 is out of range [0, 4) (gates = 4)");
}

TEST(Shrink, ValueRankOrdersZeroOneAndSmallIntegersFirst) {
  const DType t = DType::f32;
  auto rank = [&](float v) { return value_rank(t, float_to_bits_rn(t, v)); };
  EXPECT_LT(rank(0.0f), rank(-0.0f));
  EXPECT_LT(rank(-0.0f), rank(1.0f));
  EXPECT_LT(rank(1.0f), rank(-1.0f));
  EXPECT_LT(rank(-1.0f), rank(2.0f));
  EXPECT_LT(rank(7.0f), rank(0.5f));
  EXPECT_LT(rank(0.5f), rank(INFINITY));
  EXPECT_LT(rank(INFINITY), rank(NAN));
}

TEST(Shrink, AThrowingPredicateRejectsTheCandidate) {
  const Case c = random_case(19, DType::f32, 4, 2, 2);
  // Throws on anything smaller than 3 rows: the shrinker must stop at 3 rows.
  auto pred = [](const Case& k) {
    if (k.rows < 3) throw std::runtime_error("cannot judge");
    return true;
  };
  const ShrinkResult r = shrink_case_with(c, pred);
  EXPECT_EQ(r.minimal.rows, 3);
}

// A stop request (Ctrl-C) ends the search with the smallest failing case so
// far; the candidate judged while it came is not taken, whatever it says.
TEST(Shrink, StopsWhenAskedAndDropsTheCandidateInHand) {
  const Case c = random_case(21, DType::f32, 40, 8, 3);
  int calls = 0;
  bool stop = false;
  const ShrinkResult r = shrink_case_with(
      c,
      [&](const Case&) {
        stop = ++calls == 3;  // the stop comes while the third candidate runs
        return true;          // every candidate "fails"
      },
      nullptr, 60, 0, [&] { return stop; });
  EXPECT_TRUE(r.interrupted);
  EXPECT_TRUE(r.cut_short);
  EXPECT_EQ(r.attempts, 3);
  EXPECT_EQ(r.steps, 2);  // the first two taken, the third dropped
  const ShrinkResult none = shrink_case_with(c, [](const Case&) { return true; }, nullptr, 60, 0, [] { return true; });
  EXPECT_TRUE(none.interrupted);
  EXPECT_EQ(none.attempts, 0);
  EXPECT_TRUE(none.minimal == c);
}

TEST(Shrink, RespectsTheAttemptAndTimeCaps) {
  const Case c = random_case(20, DType::f32, 40, 8, 3);
  const ShrinkResult a = shrink_case_with(c, [](const Case&) { return false; }, nullptr, 60, 5);
  EXPECT_EQ(a.attempts, 5);
  EXPECT_TRUE(a.cut_short);
  auto slow = [](const Case&) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return false;
  };
  const ShrinkResult t = shrink_case_with(c, slow, nullptr, 0.1);
  EXPECT_TRUE(t.cut_short);
  EXPECT_LT(t.seconds, 1.0);
  EXPECT_TRUE(t.minimal == c);  // nothing accepted
}

TEST(Shrink, ACaseNothingCanShrinkIsReturnedUnchanged) {
  Case c = make_case(DType::f32, 1, 1, 1);
  c.input("y").set_value_rn(0, 0.0f);
  // Only the all-zero single-element case "fails": nothing smaller or simpler exists.
  auto pred = [](const Case& k) { return k.rows == 1 && k.dim == 1 && k.gates == 1; };
  const ShrinkResult r = shrink_case_with(c, pred);
  EXPECT_EQ(r.steps, 0);
  EXPECT_TRUE(r.minimal == c);
}

}  // namespace
}  // namespace gatecheck
