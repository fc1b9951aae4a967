// rmsnorm_modulate's oracle both ways: its bounds hold for the host twin on
// generated cases of every dtype and value class, and they fail one dtype
// step beyond the bound, for a dweight that misses a row, and for a forward
// whose statistics are reduced in the dtype.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "case/case_spec.h"
#include "harness/impls/implementation.h"
#include "harness/run/runner.h"
#include "kernels/rmsnorm_modulate.h"
#include "oracles/op_oracles.h"
#include "oracle_test_support.h"
#include "tests/rmsnorm_test_cases.h"

namespace gatecheck::testing {
namespace {

using rms::make;
using rms::op;
using rms::run_host;
TEST(RmsnormModulateOracle, HostIsWithinEveryBound) {
  uint64_t seed = 7;
  int64_t judged = 0, elements = 0;
  double worst = 0;
  std::map<std::string, double> worst_of;  // per output and dtype, on normal values
  for (DType t : kAllDTypes)
    for (const std::string& cls : value_classes_of(op()))
      for (auto [rows, dim, gates] : {std::tuple{1, 1, 1}, {5, 3, 2}, {17, 33, 3}, {40, 130, 4}, {3, 1000, 2}}) {
        const Case c = make(t, rows, dim, gates, cls, seed += 3);
        const Outputs got = run_host(c);
        const Reference ref = oracle_reference(c);
        for (const OpOutput& o : op().outputs) {
          const Comparison cmp = compare_accuracy(o.name, got[o.name], ref[o.name]);
          EXPECT_TRUE(cmp.ok()) << describe(c) << "\n" << cmp.summary();
          for (const Expected& e : ref[o.name]) {
            ++elements;
            judged += std::isfinite(e.bound);
          }
          if (cls == "normal") {
            worst = std::max(worst, cmp.max_err_over_bound);
            double& w = worst_of[std::string(dtype_name(t)) + " " + o.name];
            w = std::max(w, cmp.max_err_over_bound);
          }
        }
      }
  // The oracle judges most elements (what NaN/Inf inputs reach is left
  // unjudged; rows whose squares overflow fp32 are judged), and is not
  // vacuous on normal values.
  EXPECT_GT(double(judged), 0.9 * double(elements)) << judged << " of " << elements;
  EXPECT_GT(worst, 0.0);
  std::printf("judged %lld of %lld elements; worst |err|/bound on normal values %.3g\n", (long long)judged,
              (long long)elements, worst);
  for (const auto& [k, w] : worst_of) std::printf("  %-12s %.3g\n", k.c_str(), w);
}

// The nearest dtype value just outside element i's bound.
uint32_t just_outside(DType t, const Expected& w) {
  uint32_t b = round_double(t, w.value + w.bound);
  while (std::fabs(bits_to_float(t, b) - w.value) <= w.bound) b = next_up(t, b);
  return b;
}

TEST(RmsnormModulateOracle, OneStepBeyondTheBoundIsRejected) {
  for (DType t : kAllDTypes) {
    const Case c = make(t, 12, 37, 3, "normal", 99);
    const Outputs got = run_host(c);
    const Reference ref = oracle_reference(c);
    for (const OpOutput& o : op().outputs) {
      const std::vector<Expected>& want = ref[o.name];
      int64_t moved = 0;
      for (size_t i = 0; i < want.size(); i += 5) {
        if (want[i].kind != Expected::finite || !std::isfinite(want[i].bound)) continue;
        HostTensor bad = got[o.name];
        bad.set_bits(int64_t(i), just_outside(t, want[i]));
        const Comparison cmp = compare_accuracy(o.name, bad, want);
        EXPECT_EQ(cmp.failed, 1) << dtype_name(t) << " " << o.name << "[" << i << "]";
        ++moved;
      }
      EXPECT_GT(moved, 0) << o.name;
    }
  }
}

TEST(RmsnormModulateOracle, DweightMissingARowIsRejected) {
  for (DType t : kAllDTypes) {
    const Case c = make(t, 9, 24, 2, "normal", 5);
    std::vector<int64_t> first(size_t(c.rows - 1));
    for (size_t r = 0; r < first.size(); ++r) first[r] = int64_t(r);
    const Outputs short_by_one = run_host(sub_case(c, first));
    const Comparison cmp = compare_accuracy("dweight", short_by_one["dweight"], oracle_reference(c)["dweight"]);
    EXPECT_GT(cmp.failed, c.dim / 2) << dtype_name(t) << "\n" << cmp.summary();
  }
}

// A forward whose sum of squares is kept in the dtype (bf16) rather than
// fp32, on long rows: the rounding of every partial sum moves rstd far more
// than fp32's reduction may.
TEST(RmsnormModulateOracle, StatisticsReducedInTheDtypeAreRejected) {
  const DType t = DType::bf16;
  const Case c = make(t, 4, 2048, 1, "normal", 11);
  const Outputs good = run_host(c);
  HostTensor out = good["out"];
  const HostTensor &x = c.input("x"), &w = c.input("w"), &shift = c.input("shift"), &scale = c.input("scale");
  auto rn = [&](float v) { return bits_to_float(t, float_to_bits_rn(t, v)); };
  for (int64_t r = 0; r < c.rows; ++r) {
    float ss = 0;
    for (int64_t j = 0; j < c.dim; ++j) ss = rn(ss + x.value(r * c.dim + j) * x.value(r * c.dim + j));
    const float rstd = 1.0f / std::sqrt(ss / float(c.dim) + float(c.scalar("eps")));
    const int64_t k = c.index[size_t(r)] * c.dim;
    for (int64_t j = 0; j < c.dim; ++j) {
      const float n = rn(w.value(j) * (rstd * x.value(r * c.dim + j)));
      out.set_value_rn(r * c.dim + j, rn(n * rn(1.0f + scale.value(k + j))) + shift.value(k + j));
    }
  }
  const Reference ref = oracle_reference(c);
  const std::vector<Expected>& want = ref["out"];
  EXPECT_TRUE(compare_accuracy("out", good["out"], want).ok());
  const Comparison cmp = compare_accuracy("out", out, want);
  EXPECT_FALSE(cmp.ok()) << cmp.summary();
  std::printf("%s\n", cmp.summary().c_str());
}

}  // namespace
}  // namespace gatecheck::testing

namespace gatecheck::testing {
namespace {

// The host twin refuses bad input with the contract's message, naming the
// argument and its value, before it computes anything.
TEST(RmsnormModulateHost, RefusesBadInputByName) {
  const Implementation host = make_implementation("host", Device::cpu, rmsnorm_modulate_schema());
  Case c = make_case(rmsnorm_modulate_schema(), DType::bf16, 3, 4, 2);
  ASSERT_TRUE(run_case(host, c).status.ok());
  for (double eps : {0.0, -1e-6, double(INFINITY), double(NAN)}) {
    Case bad = c;
    bad.scalars[0] = eps;
    const Status s = run_case(host, bad).status;
    EXPECT_EQ(s.kind, ErrorKind::bad_scalar) << eps;
    EXPECT_NE(s.message.find("rmsnorm_modulate_fwd: eps = "), std::string::npos) << s.message;
  }
  Case bad = c;
  bad.index[1] = 2;
  const Status s = run_case(host, bad).status;
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message.find("index[1] = 2"), std::string::npos) << s.message;
}

}  // namespace
}  // namespace gatecheck::testing

namespace gatecheck::testing {
namespace {

// Another correct implementation, as far from the host's orders as the bounds
// allow: squares summed pairwise, rstd moved 2 fp32 ulps (rsqrtf's error) up
// or down by row, n formed as (w * rstd) * x, dx factored as
// rstd * (w d - x (rstd^2 c / dim)) with c summed right to left, dweight and
// the table sums over the rows in reverse. Its bounds must hold too.
float pairwise(const std::vector<float>& v, size_t lo, size_t hi) {
  if (hi - lo == 1) return v[lo];
  const size_t mid = lo + (hi - lo) / 2;
  return pairwise(v, lo, mid) + pairwise(v, mid, hi);
}

Outputs other_orders(const Case& c) {
  const DType t = c.dtype;
  auto rn = [&](float v) { return t == DType::f32 ? v : bits_to_float(t, float_to_bits_rn(t, v)); };
  const HostTensor &x = c.input("x"), &w = c.input("w"), &shift = c.input("shift"), &scale = c.input("scale"),
                   &g = c.input("grad_out");
  const int64_t D = c.dim;
  Outputs o = outputs_for(c);
  std::vector<float> rstd(static_cast<size_t>(c.rows)), sq(static_cast<size_t>(D));
  for (int64_t r = 0; r < c.rows; ++r) {
    for (int64_t j = 0; j < D; ++j) sq[size_t(j)] = x.value(r * D + j) * x.value(r * D + j);
    float v = 1.0f / std::sqrt(pairwise(sq, 0, size_t(D)) / float(D) + float(c.scalar("eps")));
    for (int k = 0; k < 2; ++k) v = std::nextafter(v, r % 2 ? INFINITY : 0.0f);
    rstd[size_t(r)] = v;
  }
  std::vector<float> dw(size_t(D), 0.0f), dsh(size_t(c.gates * D), 0.0f), dsc(size_t(c.gates * D), 0.0f);
  for (int64_t r = c.rows - 1; r >= 0; --r) {
    const float rs = rstd[size_t(r)];
    const int64_t k = c.index[size_t(r)] * D;
    float csum = 0;
    for (int64_t j = D - 1; j >= 0; --j) {
      const int64_t i = r * D + j;
      const float f = rn(1.0f + scale.value(k + j)), d = g.value(i) * f;
      const float n = rn((w.value(j) * rs) * x.value(i));
      o["out"].set_value_rn(i, rn(n * f) + shift.value(k + j));
      csum += w.value(j) * (d * x.value(i));
      dw[size_t(j)] += rs * (d * x.value(i));
      dsh[size_t(k + j)] += g.value(i);
      dsc[size_t(k + j)] += g.value(i) * n;
    }
    const float s = rs * rs * csum / float(D);
    for (int64_t j = 0; j < D; ++j) {
      const int64_t i = r * D + j;
      const float d = g.value(i) * rn(1.0f + scale.value(k + j));
      o["dx"].set_value_rn(i, rs * (w.value(j) * d - x.value(i) * s));
    }
  }
  for (int64_t j = 0; j < D; ++j) o["dweight"].set_value_rn(j, dw[size_t(j)]);
  for (size_t i = 0; i < dsh.size(); ++i) {
    o["dshift"].set_value_rn(int64_t(i), dsh[i]);
    o["dscale"].set_value_rn(int64_t(i), dsc[i]);
  }
  return o;
}

TEST(RmsnormModulateOracle, OtherOrdersAndA2UlpRsqrtAreWithinEveryBound) {
  uint64_t seed = 40;
  for (DType t : kAllDTypes)
    for (const char* cls : {"normal", "order_sensitive", "binade_span", "mixed_magnitude", "small_int", "zero_rows", "subnormal"})
      for (auto [rows, dim, gates] : {std::tuple{1, 1, 1}, {6, 7, 2}, {30, 64, 3}, {3, 1500, 2}}) {
        const Case c = make(t, rows, dim, gates, cls, seed += 3);
        const Outputs got = other_orders(c);
        const Reference ref = oracle_reference(c);
        for (const OpOutput& o : op().outputs) {
          const Comparison cmp = compare_accuracy(o.name, got[o.name], ref[o.name]);
          EXPECT_TRUE(cmp.ok()) << describe(c) << "\n" << cmp.summary();
        }
      }
}

}  // namespace
}  // namespace gatecheck::testing
