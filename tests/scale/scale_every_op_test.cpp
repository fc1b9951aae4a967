// The scale tier on every op of the catalog: the sampled oracle of each op
// agrees element for element with its whole-case reference (so a broken
// sampler fails here), the scale properties pass rmsnorm_modulate's host twin
// and catch its planted bugs at scale (dweight's among them, which only a
// sum over every row can see), and a scale file names its op and scalars.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "case/case_json.h"
#include "harness/scale/scale_session.h"
#include "kernels/rmsnorm_modulate.h"
#include "oracles/oracle_sampled.h"
#include "properties/catalog/property_catalog.h"
#include "properties/mutants/mutant_implementations.h"
#include "properties/mutants/rms_twin.h"
#include "properties/scale/scale_properties.h"
#include "properties/scale/scale_tier.h"
#include "tests/scale/test_scale_spec.h"

namespace gatecheck {
namespace {

ScaleSpec spec_of(const OpSchema& op, uint64_t seed, DType t, int64_t rows, int64_t dim, int64_t gates, ScaleValues v,
                  const std::string& pattern = "uniform", int64_t segment = 0) {
  ScaleSpec s = test::scale_spec(seed, t, rows, dim, gates, v, pattern, segment, "partition");
  s.op = &op;
  for (const auto& sc : op.scalars) s.scalars.push_back(sc.default_value);
  return s;
}

bool same(const Expected& a, const Expected& b) {
  return std::memcmp(&a.value, &b.value, sizeof a.value) == 0 && std::memcmp(&a.bound, &b.bound, sizeof a.bound) == 0 &&
         a.kind == b.kind && a.bitwise == b.bitwise && a.bits == b.bits &&
         a.or_bits == b.or_bits && a.or_nan == b.or_nan;
}

// Every sampled Expected against the whole-case reference's, bit for bit:
// the sampler must recompute the same inputs (by role: rows, gates, the
// column tensor), the same scalars, and sum every row of each sum.
void expect_sampler_matches_reference(const ScaleCase& c, const ScaleSample& smp) {
  const Reference whole = oracle_reference(materialise(c));
  const SampledReference part = oracle_sampled(c, smp);
  ASSERT_EQ(part.outputs.size(), c.op().outputs.size());
  for (size_t o = 0; o < part.outputs.size(); ++o) {
    const SampledOutput& s = part.outputs[o];
    ASSERT_EQ(s.skipped, "");
    ASSERT_FALSE(s.want.empty()) << c.op().outputs[o].name;
    const int64_t width = c.dim;  // a column output is one row of dim
    for (size_t i = 0; i < s.labels.size(); ++i)
      for (size_t j = 0; j < s.cols.size(); ++j) {
        const Expected& want = whole.outputs[o][size_t(s.labels[i] * width + s.cols[j])];
        const Expected& got = s.want[i * s.cols.size() + j];
        ASSERT_TRUE(same(got, want)) << describe(c) << ": " << c.op().outputs[o].name << "[" << s.labels[i] << ", "
                                     << s.cols[j] << "] sampled " << got.value << " +- " << got.bound
                                     << ", whole-case " << want.value << " +- " << want.bound;
      }
  }
}

TEST(ScaleEveryOp, SampledOracleMatchesTheWholeCaseReference) {
  for (const OpSchema* op : {&gate_residual_schema(), &rmsnorm_modulate_schema()})
    for (ScaleValues v : {ScaleValues::rounding, ScaleValues::cancelling})
      for (DType t : {DType::bf16, DType::f32}) {
        ScaleSpec s = spec_of(*op, 5, t, 300, 13, 7, v, "long_segment", 200);
        if (!op->scalars.empty()) s.scalars[0] = 0.75;  // not the default: the sampler must read the spec's
        const ScaleCase c = make_scale_case(s);
        expect_sampler_matches_reference(c, ScaleSample{{0, 17, 199, 299}, {0, 3, 6}, {0, 5, 12}});
        // a narrowed (shrunk) view: positions are the generated case's
        ScaleView view;
        for (int64_t r = 10; r < 250; r += 3) view.rows.push_back(r);
        view.cols = {1, 2, 7, 12};
        const ScaleCase n = make_scale_case(s, view);
        expect_sampler_matches_reference(n, ScaleSample{{0, 5, n.rows - 1}, {0, n.gates - 1}, {0, 3}});
      }
}

// Past the sums' streaming cap the sampler judges the sampled rows only, and
// names what it left out.
TEST(ScaleEveryOp, RmsnormSamplerNamesTheSumsItDoesNotStream) {
  const ScaleCase c = make_scale_case(spec_of(rmsnorm_modulate_schema(), 9, DType::bf16, 65537, 1024, 3, ScaleValues::rounding));
  const SampledReference r = oracle_sampled(c, ScaleSample{{0, 65536}, {0}, {0, 1023}});
  const OpSchema& op = c.op();
  for (size_t o = 0; o < op.outputs.size(); ++o) {
    const bool sum = op.outputs[o].kind != OutputKind::rowwise;
    EXPECT_EQ(r.outputs[o].skipped.empty(), !sum) << op.outputs[o].name;
  }
}

// Below the cap every row is streamed for the sums (x in full, the other
// inputs at the sampled columns only): 2^20 elements take well under a second.
TEST(ScaleEveryOp, RmsnormSamplerStreamsEveryRowBelowItsCap) {
  const ScaleCase c = make_scale_case(spec_of(rmsnorm_modulate_schema(), 9, DType::bf16, 65536, 16, 3, ScaleValues::rounding));
  const auto t0 = std::chrono::steady_clock::now();
  const SampledReference r = oracle_sampled(c, ScaleSample{{0, 65535}, {0, 1, 2}, {0, 7, 15}});
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("streamed %lld elements in %.3f s\n", (long long)c.elements(), secs);
  for (const auto& o : r.outputs) EXPECT_EQ(o.skipped, "");
  EXPECT_EQ(r.terms, c.elements());
}

Subject host_of(const OpSchema& op) { return make_subject("host", Device::cpu, op); }

// Every property with a scale version passes the host twin of
// rmsnorm_modulate on a case past the grid's rows, and compares something
// (whole gate groups: a plan that moves segments).
TEST(ScaleEveryOp, RmsnormPropertiesPassOnHost) {
  ScaleSpec s = spec_of(rmsnorm_modulate_schema(), 3, DType::bf16, 65537, 3, 5, ScaleValues::rounding);
  s.plan_kind = "gate_groups";
  const ScaleCase c = make_scale_case(s);
  const Subject host = host_of(rmsnorm_modulate_schema());
  ScaleCheckOptions o;
  o.repeat_runs = 2;
  for (const auto& p : property_catalog()) {
    if (!p.scale || !p.by_default || !applies_to(p, c.op())) continue;
    const Verdict v = check_scale_property(p.name, host, c, o);
    EXPECT_TRUE(v.passed) << p.name << ": " << v.message;
    EXPECT_GT(v.compared, 0) << p.name;
  }
}

// A dweight that leaves out the last row: every other output is right, and
// dweight differs only by one row's terms. Only a sum over every row sees it
// (on 300 rows, well past the sampled rows; the bound, gamma_299 times the
// sum of |terms|, is far below one term).
struct DropsLastRowOfDweight : mutants::RmsHooks {
  static constexpr const char* kName = "test:rms-dweight-drops-last-row";
  static void fold_dweight(const std::vector<float>& terms, int64_t rows, int64_t dim, std::vector<float>* dw) {
    for (int64_t r = 0; r + 1 < rows; ++r)
      for (int64_t j = 0; j < dim; ++j) (*dw)[size_t(j)] += terms[size_t(r * dim + j)];
  }
};

Subject plugin_subject(const gatecheck_op_plugin* api) {
  Subject s;
  s.api2 = api;
  s.name = api->name;
  s.op = &rmsnorm_modulate_schema();
  s.contract = Contract::everything(rmsnorm_modulate_schema());
  return s;
}

Subject rms_mutant(const std::string& name) {
  for (auto& m : planted_rmsnorm_modulate_mutants())
    if (m.name == name) return m;
  throw std::invalid_argument("no mutant " + name);
}

TEST(ScaleEveryOp, SampledOracleCatchesADweightWrongByOneRow) {
  const ScaleCase c = make_scale_case(spec_of(rmsnorm_modulate_schema(), 4, DType::f32, 300, 5, 3, ScaleValues::rounding));
  const Verdict v =
      check_scale_property("accuracy", plugin_subject(mutants::RmsMutantAbi<DropsLastRowOfDweight>::plugin()), c);
  ASSERT_FALSE(v.passed);
  ASSERT_EQ(v.failed_outputs, std::vector<std::string>{"dweight"}) << v.message;
  EXPECT_NE(v.message.find("dweight on 5 of 5 columns, each summed over every row"), std::string::npos) << v.message;
}

TEST(ScaleEveryOp, RmsnormMutantsAreCaughtAtScale) {
  ScaleCheckOptions o;
  o.repeat_runs = 3;
  const ScaleCase c = make_scale_case(spec_of(rmsnorm_modulate_schema(), 6, DType::f32, 65537, 3, 5, ScaleValues::rounding));
  // the last row of each 4-row tile modulated by the next gate: off the oracle
  EXPECT_FALSE(check_scale_property("accuracy", rms_mutant("mutant:rms-tile-index"), c, o).passed);
  EXPECT_FALSE(check_scale_property("repeatable", rms_mutant("mutant:rms-atomic-dweight"), c, o).passed);
  ScaleSpec s = spec_of(rmsnorm_modulate_schema(), 6, DType::f32, 4097, 33, 5, ScaleValues::rounding);
  s.plan_kind = "singletons";
  EXPECT_FALSE(check_scale_property("row_invariance", rms_mutant("mutant:rms-batch-split"), make_scale_case(s), o).passed);
}

// The session gives every tensor a buffer of its role's size: the column
// tensor w holds dim elements, generated from its column alone.
TEST(ScaleEveryOp, SessionLaysOutTheOpsTensorsByRole) {
  const ScaleCase c = make_scale_case(spec_of(rmsnorm_modulate_schema(), 8, DType::f16, 70, 6, 4, ScaleValues::rounding));
  ScaleSession s(host_of(rmsnorm_modulate_schema()), c, 1);
  ASSERT_TRUE(s.run(0, nullptr).ok());
  EXPECT_TRUE(s.inputs_changed().empty());
  EXPECT_TRUE(s.guards().empty());
  const int dweight = c.op().output_index("dweight"), dshift = c.op().output_index("dshift");
  EXPECT_EQ(s.output_rows(0, dweight), 1);
  EXPECT_EQ(s.output_rows(0, dshift), 4);
  EXPECT_EQ(s.prints(0, dweight).size(), 1u);
  // the materialised case's w row is the generated column tensor
  const Case m = materialise(c);
  const size_t w = size_t(c.op().float_input("w"));
  for (int64_t j = 0; j < c.dim; ++j) EXPECT_EQ(m.inputs[w].bits(j), c.input_bits(w, 0, j));
}

// A scale file of rmsnorm_modulate is version 2, names its op and its
// scalars, and reads back to the same spec; gate_residual's stay version 1.
TEST(ScaleEveryOp, ScaleFileNamesItsOp) {
  ScaleSpec s = spec_of(rmsnorm_modulate_schema(), 11, DType::bf16, 65537, 7, 3, ScaleValues::cancelling);
  s.scalars[0] = 2.5;
  CaseFile f;
  f.scale = ScaleFileCase{s, ScaleView{}};
  const std::string text = case_to_json(f);
  EXPECT_NE(text.find("\"op\": \"rmsnorm_modulate\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"eps\": 2.5"), std::string::npos) << text;
  const CaseFile back = case_from_json(text, "test");
  ASSERT_TRUE(back.scale);
  EXPECT_EQ(back.scale->spec, s);
  EXPECT_NE(scale_digest(s, {}), scale_digest(spec_of(gate_residual_schema(), 11, DType::bf16, 65537, 7, 3,
                                                      ScaleValues::cancelling),
                                              {}));
  ScaleSpec g = spec_of(gate_residual_schema(), 11, DType::bf16, 65537, 7, 3, ScaleValues::cancelling);
  f.scale = ScaleFileCase{g, ScaleView{}};
  const std::string gt = case_to_json(f);
  EXPECT_NE(gt.find("\"version\": 1"), std::string::npos);
  EXPECT_EQ(gt.find("\"op\""), std::string::npos);
  EXPECT_EQ(case_from_json(gt, "test").scale->spec.op, &gate_residual_schema());
}

// The draws of an op with scalars set them; gate_residual's draws are the
// stream they were (the same spec whichever op's entry point draws them).
TEST(ScaleEveryOp, DrawsFollowTheOp) {
  ScaleLimits l;
  l.device = Device::cpu;
  l.max_elements = int64_t(1) << 22;
  l.memory_bytes = uint64_t(1) << 30;
  for (int64_t j = 0; j < 6; ++j) {
    EXPECT_EQ(draw_scale_case(gate_residual_schema(), 7, "accuracy", j, l), draw_scale_case(7, "accuracy", j, l));
    const ScaleSpec r = draw_scale_case(rmsnorm_modulate_schema(), 7, "accuracy", j, l);
    EXPECT_EQ(r.op, &rmsnorm_modulate_schema());
    ASSERT_EQ(r.scalars.size(), 1u);
    EXPECT_GT(r.scalars[0], 0);
    EXPECT_NE(r.values, ScaleValues::exact);  // its outputs are not exact by construction
    EXPECT_NO_THROW(make_scale_case(r));
  }
}

}  // namespace
}  // namespace gatecheck
