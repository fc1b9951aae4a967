// The generators produce what their names promise, within their limits,
// deterministically.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "properties/generate/generators.h"
#include "case/plan_movement.h"

namespace gatecheck {
namespace {

bool has(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

TEST(Generators, EdgeListsHoldTheIssuesSizes) {
  for (int64_t r : {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 511, 512,
                    513, 1023, 1024, 1025})
    EXPECT_TRUE(has(edges::rows(), r)) << r;
  for (int64_t d : {1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 31, 32, 33, 127, 128, 129, 255, 256, 257})
    EXPECT_TRUE(has(edges::dims(), d)) << d;
  for (int64_t d : {3072, 5376, 8192, 4097, 4099, 8191, 8193, 16381, 16384})  // models', odd, one past 2^k, primes
    EXPECT_TRUE(has(edges::big_dims(), d)) << d;
  for (int64_t g : {1, 2, 3, 9}) EXPECT_TRUE(has(edges::gates(), g)) << g;
}

TEST(Generators, IndexPatternsAreInRangeAndShaped) {
  for (const auto& p : all_index_patterns())
    for (int64_t rows : {1, 2, 7, 64, 257})
      for (int64_t gates : {1, 2, 9, 300}) {
        const auto idx = make_index(p, rows, gates, uint64_t(rows * 31 + gates));
        ASSERT_EQ(int64_t(idx.size()), rows);
        for (int64_t k : idx) ASSERT_TRUE(k >= 0 && k < gates) << p << " gave " << k;
        if (p == "single_gate") {
          EXPECT_EQ(std::set<int64_t>(idx.begin(), idx.end()).size(), 1u);
        }
        if (p == "identity") {
          EXPECT_EQ(idx[size_t(rows - 1)], (rows - 1) % gates);
        }
        if (p == "sorted_equal" || p == "sorted_random") {
          EXPECT_TRUE(std::is_sorted(idx.begin(), idx.end())) << p;
        }
        if (p == "reversed") {
          EXPECT_TRUE(std::is_sorted(idx.rbegin(), idx.rend())) << p;
        }
        if (p == "unused_gates" && gates > 1) {
          EXPECT_LT(std::set<int64_t>(idx.begin(), idx.end()).size(), size_t(gates)) << "no gate left unused";
        }
        if (p == "max_index_heavy" && rows >= 64) {
          EXPECT_GT(std::count(idx.begin(), idx.end(), gates - 1), rows / 2);
        }
      }
  // H3: one index of length S tiled: row r uses index[r % S] for some S dividing rows
  const auto idx = make_index("h3_shared", 12, 9, 3);
  bool tiled = false;
  for (int64_t S = 1; S <= 12 && !tiled; ++S) {
    if (12 % S) continue;
    tiled = true;
    for (int64_t r = 0; r < 12; ++r) tiled = tiled && idx[size_t(r)] == idx[size_t(r % S)];
  }
  EXPECT_TRUE(tiled);
  EXPECT_THROW(make_index("nope", 3, 2, 1), std::invalid_argument);
}

TEST(Generators, ValueClassesHoldWhatTheySay) {
  auto classify = [](const std::string& cls, DType t) {
    Case c = make_case(t, 64, 33, 4);
    fill_values(&c, cls, 5);
    struct { int nan = 0, inf = 0, pos0 = 0, neg0 = 0, sub = 0, nonint = 0, huge = 0; } s;
    for (const HostTensor* x : {&c.input("res"), &c.input("gate"), &c.input("y"), &c.input("grad_out")})
      for (int64_t i = 0; i < x->numel(); ++i) {
        const float v = x->value(i);
        s.nan += std::isnan(v);
        s.inf += std::isinf(v);
        s.pos0 += v == 0 && !std::signbit(v);
        s.neg0 += v == 0 && std::signbit(v);
        s.sub += std::fpclassify(v) == FP_SUBNORMAL || (t == DType::f16 && v != 0 && std::fabs(v) < 6.1035e-5f);
        s.nonint += std::isfinite(v) && v != std::round(v);
        s.huge += std::fabs(v) > (t == DType::f16 ? 8000.0f : 1e37f);
      }
    return s;
  };
  for (DType t : {DType::bf16, DType::f16, DType::f32}) {
    EXPECT_EQ(classify("small_int", t).nonint, 0);
    EXPECT_GT(classify("signed_zero", t).neg0, 0);
    EXPECT_GT(classify("signed_zero", t).pos0, 0);
    EXPECT_GT(classify("subnormal", t).sub, 0);
    EXPECT_GT(classify("near_overflow", t).huge, 0);
    EXPECT_GT(classify("nan_inf", t).nan, 0);
    EXPECT_GT(classify("nan_inf", t).inf, 0);
    EXPECT_EQ(classify("normal", t).nan + classify("normal", t).inf, 0);
  }
}

// rmsnorm_modulate's own classes: zero rows of x that follow the seed (and
// a weight that is not zero), rows spanning a dozen binades, squares that
// overflow fp32, and eps drawn near a row's mean square.
TEST(Generators, RmsnormModulateClassesHoldWhatTheySay) {
  const OpSchema& op = *find_op_schema("rmsnorm_modulate");
  auto make = [&](const std::string& cls, DType t, uint64_t seed) {
    Case c = make_case(op, t, 24, 40, 3);
    fill_values(&c, cls, seed);
    return c;
  };
  auto zero_row = [](const Case& c, int64_t r) {
    for (int64_t j = 0; j < c.dim; ++j)
      if (c.input("x").value(r * c.dim + j) != 0) return false;
    return true;
  };
  std::set<std::vector<bool>> zero_sets;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const Case c = make("zero_rows", DType::bf16, seed);
    std::vector<bool> zeros;
    for (int64_t r = 0; r < c.rows; ++r) zeros.push_back(zero_row(c, r));
    EXPECT_GT(std::count(zeros.begin(), zeros.end(), true), 0) << seed;
    EXPECT_LT(std::count(zeros.begin(), zeros.end(), true), c.rows) << seed;
    zero_sets.insert(zeros);
    int64_t w_nonzero = 0;
    for (int64_t j = 0; j < c.dim; ++j) w_nonzero += c.input("w").value(j) != 0;
    EXPECT_GT(w_nonzero, 0) << "zero_rows zeroes rows of the batch, not the weight (seed " << seed << ")";
  }
  EXPECT_GT(zero_sets.size(), 3u) << "which rows are zero must follow the seed";
  for (DType t : {DType::bf16, DType::f32}) {
    const Case b = make("binade_span", t, 3);
    float lo = INFINITY, hi = 0;
    for (int64_t j = 0; j < b.dim; ++j) {
      const float v = std::fabs(b.input("x").value(j));
      if (v > 0) lo = std::min(lo, v), hi = std::max(hi, v);
    }
    EXPECT_GE(std::log2(hi / lo), 12) << dtype_name(t);
    const Case h = make("huge", t, 3);
    int overflow = 0;
    for (int64_t i = 0; i < h.input("x").numel(); ++i) {
      const float v = h.input("x").value(i);
      overflow += std::isinf(v * v);
    }
    EXPECT_EQ(overflow, h.input("x").numel()) << dtype_name(t) << ": every square overflows fp32";
  }
  // eps: the default, a typical value, or within a factor 4 of some row's mean square.
  int near = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const Case c = make("normal", DType::f32, seed);
    const double eps = c.scalar("eps");
    for (int64_t r = 0; r < c.rows; ++r) {
      double ms = 0;
      for (int64_t j = 0; j < c.dim; ++j) ms += double(c.input("x").value(r * c.dim + j)) * c.input("x").value(r * c.dim + j);
      ms /= double(c.dim);
      if (eps >= ms / 4.01 && eps <= ms * 4.01) {
        ++near;
        break;
      }
    }
  }
  EXPECT_GT(near, 10);
}

TEST(Generators, PlansNameOnlyRowsOfTheCase) {
  Case c = make_case(DType::f32, 70, 2, 5);
  c.index = make_index("uniform", 70, 5, 9);
  for (const auto& k : all_plan_kinds()) {
    const BatchPlan p = make_plan(k, c, 17);
    EXPECT_EQ(p.kind, k);
    EXPECT_FALSE(p.batches.empty()) << k;
    for (const auto& b : p.batches)
      for (int64_t r : b) ASSERT_TRUE(r >= 0 && r < 70) << k;
  }
  // prior-art sizes scaled to the rows: sub-batches of 1 and 7 rows appear
  const BatchPlan pa = make_plan("prior_art", c, 1);
  std::set<size_t> sizes;
  for (const auto& b : pa.batches) sizes.insert(b.size());
  EXPECT_TRUE(sizes.count(1) && sizes.count(7));
  // thresholds straddle powers of two
  const BatchPlan th = make_plan("thresholds", c, 2);
  for (const auto& b : th.batches) {
    const size_t n = b.size();
    bool near_pow2 = false;
    for (size_t s = 1; s <= 128; s *= 2) near_pow2 = near_pow2 || n + 1 == s || n == s || n == s + 1;
    EXPECT_TRUE(near_pow2) << n;
  }
  const BatchPlan rp = make_plan("repeat", c, 3);
  EXPECT_GT(rp.repeats, 0);
  EXPECT_THROW(make_plan("nope", c, 1), std::invalid_argument);
}

TEST(Generators, SpecsMaterialiseDeterministically) {
  CaseSpec s;
  s.dtype = DType::bf16;
  s.rows = 33;
  s.dim = 17;
  s.gates = 9;
  s.index_pattern = "giant_plus_tiny";
  s.value_class = "order_sensitive";
  s.plan_kind = "probe";
  s.index_seed = 1;
  s.value_seed = 2;
  s.plan_seed = 3;
  EXPECT_EQ(make_case_from_spec(s), make_case_from_spec(s));
  CaseSpec t = s;
  t.value_seed = 4;
  EXPECT_FALSE(make_case_from_spec(s) == make_case_from_spec(t));
}

TEST(Generators, SimplerCasesAreSmallerOrSimpler) {
  CaseSpec s;
  s.rows = 12;
  s.dim = 6;
  s.gates = 3;
  s.value_class = "normal";
  s.plan_kind = "partition";
  const Case c = make_case_from_spec(s);
  const auto simpler = simpler_cases(c);
  ASSERT_FALSE(simpler.empty());
  for (const Case& x : simpler) {
    EXPECT_TRUE(x.rows < c.rows || x.dim < c.dim || !(x == c));
    if (x.plan) {
      for (const auto& b : x.plan->batches)
        for (int64_t r : b) ASSERT_TRUE(r >= 0 && r < x.rows);
    }
  }
}

// Generated cases stay within their limits.
RC_GTEST_PROP(Generators, CasesRespectLimits, ()) {
  GenLimits l;
  l.max_rows = 100;
  l.max_dim = 40;
  l.max_gates = 20;
  l.big_dim_max_rows = 2;
  l.dtypes = {DType::f16};
  const Case c = *gen_case(l);
  RC_ASSERT(c.rows <= 100);
  RC_ASSERT(c.gates <= 20);
  RC_ASSERT(c.dtype == DType::f16);
  RC_ASSERT(c.dim <= 40 || (c.rows <= 2 && has(edges::big_dims(), c.dim)));
  RC_ASSERT(int64_t(c.index.size()) == c.rows);
  for (int64_t k : c.index) RC_ASSERT(k >= 0 && k < c.gates);
  RC_ASSERT(c.rows == 0 || c.gates >= 1);
  RC_ASSERT(c.plan.has_value());
  RC_TAG(c.plan->kind);
}

// The per-property generators never hand an invariance property a case it
// cannot check non-vacuously.
RC_GTEST_PROP(Generators, InvarianceCasesMoveRows, ()) {
  GenLimits l;
  l.max_rows = 64;
  l.max_dim = 8;
  for (const char* p : {"row_invariance", "segment_invariance"}) {
    const Case c = *gen_case_for(p, l);
    RC_ASSERT(c.rows >= 2);
    RC_ASSERT(plan_moves_rows(p, c));
  }
}

// gen_case_for judges an invariance candidate on its skeleton before filling
// its tensors: it must draw exactly what rc::gen::suchThat over gen_case
// draws (the same case, or both give up), and the skeleton must be judged as
// the whole case is.
TEST(Generators, InvarianceGeneratorDrawsWhatSuchThatDraws) {
  GenLimits l;
  l.max_rows = 300;
  l.max_dim = 40;
  for (const char* p : {"row_invariance", "segment_invariance"}) {
    const GenLimits lp = limits_for_property(p, l);
    const auto ours = gen_case_for(p, l);
    const auto plain = rc::gen::suchThat(gen_case(lp), [p](const Case& c) { return plan_moves_rows(p, c); });
    const auto spec = gen_case_spec(lp);
    rc::Random stream(uint64_t(std::hash<std::string>()(p)));
    int drawn = 0;
    for (int k = 0; k < 150; ++k) {
      const rc::Random r = stream.split();
      const int size = k % 101;
      const CaseSpec s = spec(r, size).value();
      EXPECT_EQ(plan_moves_rows(p, case_skeleton(s)), plan_moves_rows(p, make_case_from_spec(s))) << p << " " << k;
      std::optional<Case> a, b;
      try {
        a = ours(r, size).value();
      } catch (const rc::GenerationFailure&) {
      }
      try {
        b = plain(r, size).value();
      } catch (const rc::GenerationFailure&) {
      }
      ASSERT_EQ(a.has_value(), b.has_value()) << p << " " << k;
      if (a) {
        EXPECT_TRUE(*a == *b) << p << " " << k << ": " << describe(*a) << " vs " << describe(*b);
      }
      drawn += a.has_value();
    }
    EXPECT_GT(drawn, 100) << p;
  }
}

// Wide rows: every op's generator draws dims past 4,096, not all multiples
// of 8, for a few rows only (so a wide case costs what a small one does),
// and the coverage classes name them. This fails if they stop being drawn.
TEST(Generators, WideDimsAreDrawnForFewRows) {
  for (const OpSchema* op : op_schemas()) {
    GenLimits l;
    l.op = op;
    l.min_dim = std::max<int64_t>(l.min_dim, op->min_dim_with_rows);
    const auto spec = gen_case_spec(l);
    rc::Random stream(7);
    int past = 0, odd_past = 0, at_16k = 0;
    const int n = 2000;
    for (int k = 0; k < n; ++k) {
      const CaseSpec s = spec(stream.split(), k % 101).value();
      if (s.dim <= l.max_dim) continue;
      ASSERT_TRUE(has(edges::big_dims(), s.dim)) << op->name << ": dim " << s.dim;
      ASSERT_LE(s.rows, l.big_dim_max_rows) << op->name << ": dim " << s.dim;
      if (s.dim > kWideDimEdge) ++past;
      if (s.dim > kWideDimEdge && s.dim % 8) ++odd_past;
      if (s.dim >= 16381) ++at_16k;
    }
    // about 2% of the cases are wide, most of them past 4,096
    EXPECT_GT(past, n / 100) << op->name;
    EXPECT_GT(odd_past, n / 200) << op->name;
    EXPECT_GT(at_16k, 0) << op->name;
  }
  Case c = make_case(DType::f32, 2, 4099, 1);
  EXPECT_EQ(size_classes(c)[1], "dim 4097+");
  c = make_case(DType::f32, 2, 3072, 1);
  EXPECT_EQ(size_classes(c)[1], "dim 1000-4096");
  // a lower --max-dim (big_dim_max) keeps every wide dim under it
  GenLimits l;
  l.big_dim_max = 5000;
  const auto spec = gen_case_spec(l);
  rc::Random stream(9);
  for (int k = 0; k < 500; ++k) ASSERT_LE(spec(stream.split(), k % 101).value().dim, 5000);
}

}  // namespace
}  // namespace gatecheck
