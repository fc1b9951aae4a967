// Each planted mutant really carries its bug, and only under its trigger: it
// differs from the host twin on a trigger case and agrees with it on a benign
// one. The correct alternatives really compute differently from the host (so
// passing the property suite means something). Each plugin .so loads and
// behaves like the in-process mutant.
#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "differential.h"
#include "harness/impls/plugin_loader.h"
#include "properties/mutants/mutant_implementations.h"
#include "properties/mutants/mutants.h"
#include "random_case.h"

namespace gatecheck {
namespace {

using testing::differs_from_host;
using testing::host_impl;
using testing::random_case;

Subject by_name(const std::vector<Subject>& v, const std::string& name) {
  for (auto& m : v)
    if (m.name == name) return m;
  throw std::invalid_argument("no implementation " + name);
}

struct Trigger {
  std::string mutant;
  std::function<Case()> trigger, benign;
};

Case with_index(Case c, std::vector<int64_t> index) {
  c.index = std::move(index);
  return c;
}

const std::vector<Trigger>& triggers() {
  static const std::vector<Trigger> t = {
      {"mutant:fused-large-batch",
       [] { return random_case(1, DType::bf16, 64, 16, 3); },   // 64 rows: the fused path
       [] { return random_case(1, DType::bf16, 63, 16, 3); }},  // 63 rows: the correct path
      {"mutant:absolute-row-tiles",
       [] { return random_case(2, DType::f32, 40, 8, 1); },     // one gate across 16-row blocks
       [] { return random_case(2, DType::f32, 16, 8, 1); }},    // all rows in one block
      {"mutant:tail-columns",
       [] { return random_case(3, DType::f32, 5, 13, 3); },     // 13 = 8 + a tail of 5
       [] { return random_case(3, DType::f32, 5, 16, 3); }},    // no tail
      {"mutant:bf16-accumulator",
       [] { return random_case(4, DType::f32, 6, 8, 2); },      // fp32 terms rounded to bf16
       [] { return with_index(random_case(4, DType::bf16, 4, 8, 4), {0, 1, 2, 3}); }},  // one bf16 term per gate
      {"mutant:last-gate-boundary",
       [] { return with_index(random_case(5, DType::f32, 4, 4, 3), {0, 2, 1, 2}); },  // last gate used
       [] { return with_index(random_case(5, DType::f32, 4, 4, 3), {0, 1, 1, 0}); }}, // last gate unused
      {"mutant:skipped-row",
       [] { return random_case(6, DType::f16, 7, 4, 2); },      // odd rows
       [] { return random_case(6, DType::f16, 8, 4, 2); }},     // even rows
      {"mutant:unwritten-unused-gate",
       [] { return with_index(random_case(7, DType::f32, 3, 4, 4), {0, 1, 3}); },     // gate 2 unused
       [] { return with_index(random_case(7, DType::f32, 4, 4, 4), {0, 1, 3, 2}); }}, // all used
      {"mutant:zero-y-shortcut",
       [] {
         Case c = with_index(random_case(8, DType::bf16, 2, 2, 1), {0, 0});
         c.input("gate").set_bits(0, 0x7f80);  // gate = +Inf, y = +0: out must be NaN
         c.input("y").set_bits(0, 0);
         return c;
       },
       [] { return random_case(8, DType::bf16, 2, 2, 1); }},   // no zero in y
      {"mutant:subnormal-flush",
       [] {
         Case c = with_index(random_case(9, DType::f32, 1, 1, 1), {0});
         c.input("grad_out").set_value_rn(0, 1e-39f);  // subnormal in fp32
         c.input("gate").set_value_rn(0, 1.0f);
         return c;
       },
       [] { return random_case(9, DType::f32, 3, 3, 2); }},
  };
  return t;
}

TEST(Mutants, AtLeastEightDistinctBugClassesNamedByClass) {
  const auto v = planted_mutants();
  std::set<std::string> names;
  for (const auto& m : v) {
    EXPECT_EQ(m.name.rfind("mutant:", 0), 0u) << m.name;
    EXPECT_EQ(m.device, Device::cpu);
    EXPECT_TRUE(m.contract.claims_for("accuracy", "", DType::bf16)) << m.name << " claims everything";
    names.insert(m.name);
  }
  EXPECT_GE(names.size(), 8u);
  EXPECT_EQ(names.size(), v.size());
}

TEST(Mutants, EachDiffersFromHostOnlyUnderItsTrigger) {
  const auto v = planted_mutants();
  for (const auto& t : triggers()) {
    const Subject m = by_name(v, t.mutant);
    EXPECT_TRUE(differs_from_host(m, t.trigger())) << t.mutant << ": the trigger case shows no bug";
    EXPECT_FALSE(differs_from_host(m, t.benign())) << t.mutant << ": wrong even without its trigger";
  }
}

TEST(Mutants, ShuffledAccumulationIsNotRepeatable) {
  const Subject m = by_name(planted_mutants(), "mutant:shuffled-accumulation");
  const Case c = random_case(10, DType::f32, 50, 8, 1);
  const RunResult a = run_case(m, c), b = run_case(m, c);
  ASSERT_TRUE(a.status.ok() && b.status.ok());
  EXPECT_FALSE(a.outputs["grad_gate"] == b.outputs["grad_gate"]);
  EXPECT_TRUE(a.outputs["out"] == b.outputs["out"]);  // only grad_gate is affected
  // One row per gate: nothing to reorder, so it is repeatable there.
  const Case single = with_index(random_case(10, DType::f32, 3, 8, 3), {2, 0, 1});
  EXPECT_TRUE(run_case(m, single).outputs["grad_gate"] == run_case(m, single).outputs["grad_gate"]);
}

TEST(Mutants, MutantsRejectBadInputLikeTheHost) {
  for (const auto& m : planted_mutants()) {
    Case c = random_case(21, DType::f32, 3, 2, 2);
    c.index[1] = 5;  // out of range
    const RunResult r = run_case(m, c);
    EXPECT_EQ(r.status.kind, ErrorKind::index_out_of_range) << m.name << ": " << r.status.message;
  }
}

TEST(Alternatives, ComputeDifferentlyFromTheHost) {
  const auto v = correct_alternatives();
  ASSERT_EQ(v.size(), 2u);
  const auto fused = by_name(v, "alt:fused-forward");
  const auto pairwise = by_name(v, "alt:pairwise-grad-gate");
  // fused: one rounding instead of two changes some bf16 outputs...
  const Case c = random_case(30, DType::bf16, 32, 16, 3);
  const RunResult h = run_case(host_impl(), c), f = run_case(fused, c);
  EXPECT_FALSE(h.outputs["out"] == f.outputs["out"]);
  EXPECT_TRUE(h.outputs["grad_gate"] == f.outputs["grad_gate"]);
  // ...and pairwise changes some fp32 grad_gate sums over long segments.
  const Case s = random_case(31, DType::f32, 200, 16, 2);
  const RunResult h2 = run_case(host_impl(), s), p = run_case(pairwise, s);
  EXPECT_FALSE(h2.outputs["grad_gate"] == p.outputs["grad_gate"]);
  EXPECT_TRUE(h2.outputs["out"] == p.outputs["out"]);
}

TEST(Alternatives, PairwiseGradGateDependsOnlyOnTheGatesOwnRows) {
  // Segment invariance by construction: gate 0's rows alone in a sub-batch
  // give the same grad_gate row as in the full batch.
  const auto pairwise = by_name(correct_alternatives(), "alt:pairwise-grad-gate");
  const Case c = random_case(32, DType::f32, 90, 8, 3);
  std::vector<int64_t> rows0;
  for (int64_t r = 0; r < c.rows; ++r)
    if (c.index[size_t(r)] == 0) rows0.push_back(r);
  const RunResult full = run_case(pairwise, c), part = run_case(pairwise, sub_case(c, rows0));
  for (int64_t j = 0; j < c.dim; ++j) EXPECT_EQ(full.outputs["grad_gate"].bits(j), part.outputs["grad_gate"].bits(j));
}

TEST(MutantPlugins, EachSharedLibraryLoadsAndMatchesItsMutant) {
  std::vector<mutants::MutantInfo> all = mutants::mutant_catalog();
  for (const auto& a : mutants::alternative_catalog()) all.push_back(a);
  for (const auto& info : all) {
    std::string id = info.bug_class;
    for (auto& ch : id)
      if (ch == '-') ch = '_';
    const std::string path = std::string(GATECHECK_MUTANT_PLUGIN_DIR) + "/gatecheck_mutant_" + id + ".so";
    Implementation p;
    ASSERT_NO_THROW(p = load_plugin(path, Device::cpu, gate_residual_schema())) << path;
    EXPECT_EQ(std::string(p.api->name), info.plugin()->name);
    if (info.bug_class == "shuffled-accumulation") continue;  // not repeatable by design
    Implementation in_process;
    in_process.api = info.plugin();
    in_process.name = info.plugin()->name;
    const Case c = random_case(40, DType::bf16, 65, 9, 3);
    const RunResult a = run_case(p, c), b = run_case(in_process, c);
    EXPECT_TRUE(a.outputs["out"] == b.outputs["out"] && a.outputs["grad_gate"] == b.outputs["grad_gate"] &&
                a.outputs["grad_y"] == b.outputs["grad_y"] && a.memory.size() == b.memory.size())
        << info.bug_class;
  }
}

}  // namespace
}  // namespace gatecheck
