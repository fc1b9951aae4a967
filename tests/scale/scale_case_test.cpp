// Scale cases (case/scale_case.h): values as a function of position, the
// exact-value bound (each condition holds within it and fails beyond it), the
// view, and the corpus file's scale object.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "case/case_json.h"
#include "case/scale_case.h"
#include "oracles/exact_expected.h"
#include "tests/scale/test_scale_spec.h"

namespace gatecheck {
namespace {

ScaleSpec spec(int64_t rows, int64_t dim, int64_t gates, ScaleValues v = ScaleValues::rounding) {
  return test::scale_spec(11, DType::bf16, rows, dim, gates, v, "uniform", 0, "partition");
}

// Within the bound, every product and sum of the values is exact in the dtype,
// for every combination (exhaustive); just past it, some is not.
TEST(ScaleValues, ExactBoundHoldsInsideAndFailsOutside) {
  for (DType t : {DType::bf16, DType::f16}) {
    for (int m : {0, 1, 2}) {
      const int32_t K = exact_value_bound(t, m, 1);
      ASSERT_GT(K, 0);
      const double step = std::ldexp(1.0, -m);
      auto exact = [&](double x) { return double(bits_to_float(t, float_to_bits_rn(t, float(x)))) == x; };
      // every res, gate and y in [-K, K] (steps of 2^-m): gate*y and res + gate*y are exact
      auto all_exact = [&](int k) {
        for (int a = -k; a <= k; ++a)
          for (int b = -k; b <= k; ++b) {
            const double p = a * step * b * step;
            if (!exact(p)) return false;
            for (int r = -k; r <= k; ++r)
              if (!exact(r * step + p)) return false;
          }
        return true;
      };
      EXPECT_TRUE(all_exact(K)) << dtype_name(t) << " m=" << m << " K=" << K;
      bool any_inexact = false;  // past the bound some product or sum rounds
      for (int k = K + 1; k <= K + 3 && !any_inexact; ++k) any_inexact = !all_exact(k);
      EXPECT_TRUE(any_inexact) << dtype_name(t) << " m=" << m << " K=" << K;
    }
  }
}

// The fp32 sum's condition: at the bound a segment's largest sum is exact in
// any order; one step past it (odd terms past 2^24), a sequential fp32 sum rounds.
TEST(ScaleValues, ExactBoundKeepsFp32SumsExact) {
  for (int64_t seg : {int64_t(1000), int64_t(65536), int64_t(699100)}) {
    const int32_t K = exact_value_bound(DType::f32, 0, seg);
    ASSERT_GT(K, 0);
    EXPECT_LE(seg * K * K, int64_t(1) << 24);
    auto fp32_sum = [](int64_t n, int64_t term) {
      float acc = 0;
      for (int64_t i = 0; i < n; ++i) acc += float(term);
      return double(acc);
    };
    EXPECT_EQ(fp32_sum(seg, int64_t(K) * K), double(seg) * K * K);
    int64_t k = K + 1;
    if (k % 2 == 0) ++k;  // an odd term: its partial sums past 2^24 are not all fp32 values
    EXPECT_NE(fp32_sum(seg, k * k), double(seg) * k * k) << "segment " << seg << " K " << K;
  }
  EXPECT_EQ(exact_value_bound(DType::bf16, 0, 1), 15);  // 15 + 15*15 = 240 <= 256
  EXPECT_EQ(exact_value_bound(DType::bf16, 0, 699100), 4);
}

TEST(ScaleValues, ExactValuesProblemNamesTheLongSegment) {
  ScaleSpec s = spec(5000, 3, 1, ScaleValues::exact);
  s.index_pattern = "single_gate";
  s.dtype = DType::f32;
  s.value_bound = exact_value_bound(DType::f32, 0, 5000);
  EXPECT_EQ(exact_values_problem(make_scale_case(s)), "");
  s.value_bound += 1;
  const std::string why = exact_values_problem(make_scale_case(s));
  EXPECT_NE(why.find("segment of 5000 rows"), std::string::npos) << why;
}

// The host generation and materialise agree with the value function; exact
// values stay within their bound, rounding values use their whole mantissa.
TEST(ScaleValues, ValuesAreAFunctionOfPosition) {
  ScaleSpec s = spec(300, 7, 5, ScaleValues::exact);
  s.value_bound = 3;
  s.frac_bits = 1;
  const ScaleCase c = make_scale_case(s);
  const Case m = materialise(c);
  std::set<float> seen;
  for (int64_t i = 0; i < m.input("res").numel(); ++i) {
    const float v = m.input("y").value(i);
    EXPECT_LE(std::fabs(v), 1.5f);
    EXPECT_EQ(v * 2, std::nearbyint(v * 2));
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 7u);  // -1.5 .. 1.5 in steps of 0.5
  s.values = ScaleValues::rounding;
  const Case r = materialise(make_scale_case(s));
  int low_bits = 0;
  for (int64_t i = 0; i < r.input("y").numel(); ++i) low_bits += (r.input("y").bits(i) & 1);
  EXPECT_GT(low_bits, r.input("y").numel() / 4);  // not short integers: sums round
  // a view keeps each element's value
  ScaleView v;
  v.rows = {3, 10, 299};
  v.cols = {1, 6};
  const Case sub = materialise(make_scale_case(s, v));
  EXPECT_EQ(sub.input("y").bits(1 * 2 + 1), r.input("y").bits(10 * 7 + 6));
  EXPECT_EQ(sub.index[2], r.index[299]);
}

TEST(ScaleCase, LongSegmentPatternHoldsTheSegment) {
  ScaleSpec s = spec(70000, 1, 9);
  s.index_pattern = "long_segment";
  s.segment = 65536;
  const ScaleCase c = make_scale_case(s);
  EXPECT_GE(longest_segment(c.index, c.gates), 65536);
  s.segment = 0;
  EXPECT_NE(scale_spec_problem(s).find("segment"), std::string::npos);
}

TEST(ScaleCase, ViewRestrictsThePlanAndGates) {
  ScaleSpec s = spec(1000, 4, 6);
  s.plan_kind = "gate_groups";
  const ScaleCase whole = make_scale_case(s);
  ScaleView v;
  for (int64_t r = 100; r < 200; ++r) v.rows.push_back(r);
  const ScaleCase part = make_scale_case(s, v);
  ASSERT_TRUE(part.plan);
  for (const auto& b : part.plan->batches)
    for (int64_t r : b) EXPECT_TRUE(r >= 0 && r < 100);
  // dropping a gate that kept rows use is refused
  v.gates = {0};
  v.remap.assign(6, -1);
  v.remap[0] = 0;
  EXPECT_THROW(make_scale_case(s, v), std::invalid_argument);
  EXPECT_EQ(whole.rows, 1000);
}

// A shrunk case is tagged by its own size: 514 rows kept of a draw past 2^31
// elements is not "past 2^31 elements" (it once was), while the draw is.
TEST(ScaleCase, ShrunkCaseIsTaggedByItsOwnSize) {
  ScaleSpec s = spec(1048577, 2048, 9);
  s.rung = "past 2^31 elements";
  EXPECT_NE(describe(make_scale_case(s)).find(" [past 2^31 elements]"), std::string::npos);
  ScaleView v;
  for (int64_t r = 0; r < 514; ++r) v.rows.push_back(r);
  const std::string shrunk = describe(make_scale_case(s, v));
  EXPECT_EQ(shrunk.find("[past 2^31"), std::string::npos) << shrunk;
  EXPECT_NE(shrunk.find(" [under 65,535 x 256 elements; shrunk from a draw for past 2^31 elements]"), std::string::npos)
      << shrunk;
  EXPECT_EQ(scale_size_tag(1048577, 2048), "past 2^31 elements");
  EXPECT_EQ(scale_size_tag(65536, 1), "past 65,535 rows");
  EXPECT_EQ(scale_size_tag(65535, 256), "at least 65,535 x 256 elements");
  EXPECT_EQ(scale_size_tag(514, 2048), "under 65,535 x 256 elements");
}

TEST(ScaleCaseFile, SpecAndViewRoundTrip) {
  ScaleSpec s = spec(699100, 3072, 9, ScaleValues::exact);
  s.value_bound = 4;
  s.rung = "past 2^31 elements";
  ScaleView v;
  for (int64_t r = 0; r < 65536; ++r) v.rows.push_back(r);
  for (int64_t r = 70000; r < 70010; ++r) v.rows.push_back(r);
  v.cols = {0, 5, 6, 7};
  v.gates = {4, 2};
  v.remap = {-1, -1, 1, -1, 0, -1, -1, -1, -1};
  v.all_batches = false;
  v.batches = {1, 3};
  CaseFile f;
  f.scale = ScaleFileCase{s, v};
  f.failure = FailureRecord{"host", "cpu", "accuracy", "m", "r", true, {}};
  const std::string text = case_to_json(f);
  EXPECT_LT(text.size(), 2000u);  // runs, not 65,546 row numbers
  const CaseFile back = case_from_json(text, "<test>");
  ASSERT_TRUE(back.scale);
  EXPECT_EQ(back.scale->spec, s);
  EXPECT_EQ(back.scale->view, v);
  EXPECT_EQ(back.c.rows, 0);  // the case itself is never materialised by the reader
}

TEST(ScaleCaseFile, BadScaleObjectsAreNamed) {
  ScaleSpec s = spec(100, 4, 3);
  CaseFile f;
  f.scale = ScaleFileCase{s, {}};
  std::string text = case_to_json(f);
  auto expect_error = [](const std::string& t, const std::string& words) {
    try {
      case_from_json(t, "bad.json");
      ADD_FAILURE() << "accepted: " << t;
    } catch (const CaseFileError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    const size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? t : t.replace(at, from.size(), to);
  };
  expect_error(replace("\"values\": \"rounding\"", "\"values\": \"wild\""), "scale 'values' is 'wild'");
  expect_error(replace("\"index_pattern\": \"uniform\"", "\"index_pattern\": \"nope\""), "unknown index pattern 'nope'");
  expect_error(replace("\"view\": {}", "\"view\": {\"rows\": [[5, 3]]}"), "scale view 'rows'");
  expect_error(replace("\"view\": {}", "\"view\": {\"rows\": [[0, 7]]}"), "are not the scale view's");
  expect_error(replace("\"frac_bits\": 0", "\"frac_bits\": 40"), "frac_bits 40");
}

// The exact expectations: the sign of a zero product, and either zero for a
// sum of zeros only.
TEST(ExactExpected, SignedZeros) {
  ValueRule r{5, int32_t(ScaleValues::exact), 0, 0};  // every k = 0
  EXPECT_EQ(exact_out_bits(DType::f32, r, 1, 2), 0u);
  const ExactGateExpect e = exact_grad_gate_bits(DType::bf16, 0, 0, true, false);
  EXPECT_EQ(e.bits, 0u);
  EXPECT_EQ(e.alt_bits, 0x8000u);
  const ExactGateExpect cancel = exact_grad_gate_bits(DType::bf16, 0, 0, true, true);
  EXPECT_EQ(cancel.alt_bits, 0u);
}

}  // namespace
}  // namespace gatecheck
