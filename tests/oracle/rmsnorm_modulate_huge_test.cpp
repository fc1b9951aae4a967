// rmsnorm_modulate's rows whose fp32 sum of squares overflows (the huge
// class), both ways. The contract allows two outcomes there: rstd = +0 (an
// unscaled implementation: out = shift, dx = +-0, the row's dweight and
// dscale terms +-0, each NaN where another factor's product overflows
// first), or the usual bounds (an implementation that scales the row). The
// host twin (unscaled) and a scaled implementation pass; out = 0, a finite
// wrong dx, a NaN dx where c is finite, a dweight or dscale just outside its
// hull, and the rstd = +0 outcome on a row that cannot overflow all fail.
// The thresholds (may, must overflow) are placed on rows of equal squares
// and on an eps that overflows the mean square by itself.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "case/case_spec.h"
#include "harness/impls/implementation.h"
#include "harness/run/runner.h"
#include "kernels/rmsnorm_modulate.h"
#include "oracles/op_oracles.h"
#include "oracles/rmsnorm_modulate_rows.h"
#include "oracle_test_support.h"
#include "tests/rmsnorm_test_cases.h"

namespace gatecheck::testing {
namespace {

using rms::make;
using rms::op;
using rms::run_host;
// Every output of `got` within the oracle; the failures' summaries otherwise.
std::string all_ok(const Case& c, const Outputs& got, const Reference& ref) {
  std::string bad;
  for (const OpOutput& o : op().outputs) {
    const Comparison cmp = compare_accuracy(o.name, got[o.name], ref[o.name]);
    if (!cmp.ok()) bad += cmp.summary() + "\n";
  }
  return bad.empty() ? bad : describe(c) + "\n" + bad;
}

// A correct implementation that cannot overflow its statistics: the sum of
// squares in float64, rstd rounded once to fp32 (as a row scaled by a power
// of two would give it); everything else in fp32, in row order.
Outputs scaled(const Case& c) {
  const DType t = c.dtype;
  auto rn = [&](float v) { return t == DType::f32 ? v : bits_to_float(t, float_to_bits_rn(t, v)); };
  const HostTensor &x = c.input("x"), &w = c.input("w"), &shift = c.input("shift"), &scale = c.input("scale"),
                   &g = c.input("grad_out");
  const int64_t D = c.dim;
  Outputs o = outputs_for(c);
  std::vector<float> dw(size_t(D), 0.0f), dsh(size_t(c.gates * D), 0.0f), dsc(dsh);
  for (int64_t r = 0; r < c.rows; ++r) {
    double ss = 0;
    for (int64_t j = 0; j < D; ++j) ss += double(x.value(r * D + j)) * x.value(r * D + j);
    const float rs = float(1 / std::sqrt(ss / double(D) + c.scalar("eps")));
    const int64_t k = c.index[size_t(r)] * D;
    float csum = 0;
    for (int64_t j = 0; j < D; ++j) {
      const int64_t i = r * D + j;
      const float f = rn(1.0f + scale.value(k + j)), d = g.value(i) * f;
      const float n = rn(w.value(j) * (rs * x.value(i)));
      o["out"].set_value_rn(i, rn(n * f) + shift.value(k + j));
      csum += w.value(j) * d * x.value(i);
      dw[size_t(j)] += d * x.value(i) * rs;
      dsh[size_t(k + j)] += g.value(i);
      dsc[size_t(k + j)] += g.value(i) * n;
    }
    const float kk = rs * rs * rs * csum / float(D);
    for (int64_t j = 0; j < D; ++j) {
      const int64_t i = r * D + j;
      const float d = g.value(i) * rn(1.0f + scale.value(k + j));
      o["dx"].set_value_rn(i, rs * w.value(j) * d - x.value(i) * kk);
    }
  }
  for (int64_t j = 0; j < D; ++j) o["dweight"].set_value_rn(j, dw[size_t(j)]);
  for (size_t i = 0; i < dsh.size(); ++i) {
    o["dshift"].set_value_rn(int64_t(i), dsh[i]);
    o["dscale"].set_value_rn(int64_t(i), dsc[i]);
  }
  return o;
}

constexpr DType kWide[] = {DType::f32, DType::bf16};  // the dtypes whose squares can overflow fp32

// The huge class: every row's squares overflow fp32 (the oracle says so),
// the host takes rstd = +0 (out is shift, bit for bit), and both it and a
// scaled implementation pass every output.
TEST(RmsnormModulateHuge, HostAndAScaledImplementationPass) {
  uint64_t seed = 300;
  int64_t rows_seen = 0;
  for (DType t : kWide)
    for (auto [rows, dim, gates] : {std::tuple{1, 1, 1}, {5, 3, 2}, {17, 33, 3}, {3, 1000, 2}}) {
      const Case c = make(t, rows, dim, gates, "huge", seed += 3);
      const Reference ref = oracle_reference(c);
      const Outputs host = run_host(c);
      for (int64_t r = 0; r < c.rows; ++r, ++rows_seen) {
        const RmsRowOverflow ov = rmsnorm_modulate_row_overflow(c, r);
        ASSERT_TRUE(ov.must && ov.may) << describe(c) << " row " << r;
        for (int64_t j = 0; j < c.dim; ++j)
          ASSERT_EQ(host["out"].bits(r * dim + j), c.input("shift").bits(c.index[size_t(r)] * dim + j))
              << describe(c) << " [" << r << "," << j << "]";
      }
      EXPECT_EQ(all_ok(c, host, ref), "");
      EXPECT_EQ(all_ok(c, scaled(c), ref), "");
      // The scaled implementation's out is the normalised row: far from shift.
      EXPECT_NE(scaled(c)["out"].bits(0), host["out"].bits(0)) << describe(c);
    }
  EXPECT_GT(rows_seen, 40);
}

// A normal case whose row 1 is huge (every square past fp32's largest) while
// w, g and scale stay N(0,1): the true values are moderate, c is finite, and
// the row's bounds are tight enough to tell outcomes apart.
Case one_huge_row(DType t) {
  Case c = make(t, 4, 8, 2, "normal", 77);
  HostTensor& x = c.inputs[size_t(op().input_index("x"))];
  for (int64_t j = 0; j < c.dim; ++j) x.set_value_rn(1 * c.dim + j, float(std::ldexp((j % 2 ? -1 : 1) * (1 + j / 16.0), 70)));
  return c;
}

TEST(RmsnormModulateHuge, WrongOutcomesOnAnOverflowingRowFail) {
  for (DType t : kWide) {
    const Case c = one_huge_row(t);
    const int64_t D = c.dim, k = c.index[1];
    ASSERT_TRUE(rmsnorm_modulate_row_overflow(c, 1).must);
    ASSERT_FALSE(rmsnorm_modulate_row_overflow(c, 0).may);
    const Reference ref = oracle_reference(c);
    const Outputs host = run_host(c);
    ASSERT_EQ(all_ok(c, host, ref), "");
    ASSERT_EQ(all_ok(c, scaled(c), ref), "");
    for (int64_t j = 0; j < D; ++j) EXPECT_EQ(host["dx"].value(D + j), 0.0f) << "c is finite: dx is +-0";
    auto failed = [&](const Outputs& got, const char* out) {
      const Comparison cmp = compare_accuracy(out, got[out], ref[out]);
      const std::string sum = cmp.summary();
      std::printf("%s %s\n", dtype_name(t), sum.substr(0, sum.find('\n')).c_str());
      return cmp.failed;
    };
    {  // out = 0 instead of shift on the overflowing row
      Outputs bad = host;
      for (int64_t j = 0; j < D; ++j) bad["out"].set_value_rn(D + j, 0.0f);
      EXPECT_EQ(failed(bad, "out"), D) << dtype_name(t);
    }
    {  // a finite dx that is neither +-0 nor near the true value
      Outputs bad = host;
      for (int64_t j = 0; j < D; ++j) bad["dx"].set_value_rn(D + j, 1.0f);
      EXPECT_EQ(failed(bad, "dx"), D) << dtype_name(t);
    }
    {  // NaN dx where nothing overflows but the sum of squares (c is finite)
      Outputs bad = host;
      for (int64_t j = 0; j < D; ++j) bad["dx"].set_value_rn(D + j, NAN);
      EXPECT_EQ(failed(bad, "dx"), D) << dtype_name(t);
    }
    // dweight (every column holds the row's term) and the row's gate's
    // dscale: one dtype step outside the bound, which spans both outcomes.
    for (const char* out : {"dweight", "dscale"}) {
      const std::vector<Expected>& want = ref[out];
      const int64_t first = std::string(out) == "dweight" ? 0 : k * D;
      for (int64_t j = 0; j < D; ++j) {
        const Expected& e = want[size_t(first + j)];
        ASSERT_EQ(e.kind, Expected::finite) << out << j;
        Outputs bad = host;
        uint32_t b = round_double(t, e.value + e.bound);
        while (std::fabs(bits_to_float(t, b) - e.value) <= e.bound) b = next_up(t, b);
        bad[out].set_bits(first + j, b);
        EXPECT_EQ(compare_accuracy(out, bad[out], want).failed, 1) << dtype_name(t) << " " << out << j;
      }
    }
    {  // the rstd = +0 outcome on row 0, whose sum cannot overflow
      Outputs bad = host;
      for (int64_t j = 0; j < D; ++j) bad["out"].set_bits(j, c.input("shift").bits(c.index[0] * D + j));
      EXPECT_EQ(failed(bad, "out"), D) << dtype_name(t);
      Outputs bad_dx = host;
      for (int64_t j = 0; j < D; ++j) bad_dx["dx"].set_value_rn(j, 0.0f);
      EXPECT_EQ(failed(bad_dx, "dx"), D) << dtype_name(t);
    }
  }
}

// The thresholds at their edges, on rows of 1024 equal squares v^2 (each
// exact in fp32): below fp32's overflow with room (neither), a sum of
// exactly 2^128 (may: within dim roundings of the threshold, and the oracle
// then accepts rstd = +0 as well as the bounds), and 2% past (must).
TEST(RmsnormModulateHuge, ThresholdsOnEqualSquares) {
  const int64_t D = 1024;
  Case c = make(DType::f32, 3, D, 1, "normal", 5);
  HostTensor& x = c.inputs[size_t(op().input_index("x"))];
  const double v[3] = {std::ldexp(1.5, 58), std::ldexp(1.0, 59), std::ldexp(1.0 + 1.0 / 64, 59)};
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t j = 0; j < D; ++j) x.set_value_rn(r * D + j, float(j % 2 ? -v[r] : v[r]));
  const RmsRowOverflow r0 = rmsnorm_modulate_row_overflow(c, 0), r1 = rmsnorm_modulate_row_overflow(c, 1),
                       r2 = rmsnorm_modulate_row_overflow(c, 2);
  EXPECT_FALSE(r0.may);
  EXPECT_TRUE(r1.may && !r1.must);
  EXPECT_TRUE(r2.may && r2.must);
  const Reference ref = oracle_reference(c);
  const Outputs host = run_host(c), sc = scaled(c);
  EXPECT_EQ(all_ok(c, host, ref), "");
  EXPECT_EQ(all_ok(c, sc, ref), "");
  // The host's sum is 2^128 on row 1 (every partial k 2^118 exact): rstd = +0.
  for (int64_t r : {1, 2})
    for (int64_t j = 0; j < D; ++j) EXPECT_EQ(host["out"].bits(r * D + j), c.input("shift").bits(j)) << r;
  // Row 0: shift is not an outcome there.
  Outputs bad = host;
  for (int64_t j = 0; j < D; ++j) bad["out"].set_bits(j, c.input("shift").bits(j));
  EXPECT_EQ(compare_accuracy("out", bad["out"], ref["out"]).failed, D);
}

// A large eps (2^127): row 0's sum of squares (1.125 2^127) is finite, but
// its mean square plus eps overflows, so rstd = +0 as well (the host's out is
// shift) and the oracle accepts it; row 1's (2^124 + 2^127) does not, rstd
// is finite there (n about w / 3), and shift is wrong.
TEST(RmsnormModulateHuge, AnEpsThatOverflowsTheMeanSquare) {
  Case c = make(DType::f32, 2, 1, 1, "normal", 9);
  c.scalars[size_t(op().scalar_index("eps"))] = std::ldexp(1.0, 127);
  HostTensor& x = c.inputs[size_t(op().input_index("x"))];
  x.set_value_rn(0, float(std::ldexp(1.5, 63)));
  x.set_value_rn(1, float(std::ldexp(1.0, 62)));
  const RmsRowOverflow r0 = rmsnorm_modulate_row_overflow(c, 0), r1 = rmsnorm_modulate_row_overflow(c, 1);
  EXPECT_TRUE(r0.may && !r0.must);
  EXPECT_FALSE(r1.may);
  const Reference ref = oracle_reference(c);
  const Outputs host = run_host(c);
  EXPECT_EQ(host["out"].bits(0), c.input("shift").bits(0));
  EXPECT_EQ(all_ok(c, host, ref), "");
  Outputs bad = host;
  bad["out"].set_bits(1, c.input("shift").bits(0));
  EXPECT_EQ(compare_accuracy("out", bad["out"], ref["out"]).failed, 1);
}

// torch eager (where it is built) takes rstd = +0 too: (x * rstd) * w is +-0,
// so out is shift bit for bit on every overflowing row, and every output it
// claims is within the oracle (f32: all five; bf16: out, its contract
// withdrawing the gradients' accuracy in 16-bit dtypes).
TEST(RmsnormModulateHuge, TorchEagerTakesTheZeroRstdOutcome) {
  Implementation eager;
  try {
    eager = make_implementation("torch-eager", Device::cpu, op());
  } catch (const std::runtime_error& e) {
    GTEST_SKIP() << e.what();
  }
  uint64_t seed = 500;
  int64_t must_rows = 0;
  for (DType t : kWide) {
    std::vector<Case> cases = {one_huge_row(t)};
    for (auto [rows, dim, gates] : {std::tuple{1, 1, 1}, {17, 33, 3}, {3, 1000, 2}})
      cases.push_back(make(t, rows, dim, gates, "huge", seed += 3));
    for (const Case& c : cases) {
      RunResult r = run_case(eager, c);
      ASSERT_TRUE(r.status.ok()) << r.status.message;
      const Reference ref = oracle_reference(c);
      for (int64_t row = 0; row < c.rows; ++row) {
        if (!rmsnorm_modulate_row_overflow(c, row).must) continue;
        ++must_rows;
        for (int64_t j = 0; j < c.dim; ++j)
          ASSERT_EQ(r.outputs["out"].bits(row * c.dim + j), c.input("shift").bits(c.index[size_t(row)] * c.dim + j))
              << describe(c) << " [" << row << "," << j << "]";
      }
      for (const OpOutput& o : op().outputs) {
        if (t != DType::f32 && std::string(o.name) != "out") continue;
        const Comparison cmp = compare_accuracy(o.name, r.outputs[o.name], ref[o.name]);
        EXPECT_TRUE(cmp.ok()) << describe(c) << "\n" << cmp.summary();
      }
    }
  }
  EXPECT_EQ(must_rows, 2 * (1 + 1 + 17 + 3));
}

bool same_expected(const Expected& a, const Expected& b) {
  return std::memcmp(&a.value, &b.value, sizeof a.value) == 0 && std::memcmp(&a.bound, &b.bound, sizeof a.bound) == 0 &&
         a.kind == b.kind && a.bits == b.bits && a.or_bits == b.or_bits && a.or_nan == b.or_nan;
}

// The scale tier's sampled oracle streams rows through the same one-row
// reference with only its sums' columns (no out, no dx): the huge rules must
// hold there too. Sums streamed at every other column, and out/dx of every
// third row, equal the whole-case reference's bit for bit, second outcomes
// included.
TEST(RmsnormModulateHuge, StreamedRowsJudgeAsTheWholeCase) {
  using namespace rms_oracle;
  uint64_t seed = 700;
  int64_t or_bits_seen = 0, or_nan_sums = 0;
  for (DType t : kWide) {
    std::vector<Case> cases = {one_huge_row(t)};
    for (auto [rows, dim, gates] : {std::tuple{5, 3, 2}, {17, 33, 3}})
      cases.push_back(make(t, rows, dim, gates, "huge", seed += 3));
    for (const Case& c : cases) {
      const Reference ref = oracle_reference(c);
      const int64_t dim = c.dim;
      std::vector<int64_t> col_slot(static_cast<size_t>(dim), -1);
      int64_t nc = 0;
      for (int64_t j = 0; j < dim; j += 2) col_slot[size_t(j)] = nc++;
      std::vector<InexactSum> dw(static_cast<size_t>(nc)), dsc(static_cast<size_t>(c.gates * nc));
      std::vector<Expected> out(static_cast<size_t>(c.rows * dim)), dx(static_cast<size_t>(c.rows * dim));
      auto row_of = [&](const char* name, int64_t r) {
        std::vector<double> v(static_cast<size_t>(dim));
        for (int64_t j = 0; j < dim; ++j) v[size_t(j)] = c.input(name).value(r * dim + j);
        return v;
      };
      const std::vector<double> w = row_of("w", 0);
      RowScratch scratch;
      for (int64_t r = 0; r < c.rows; ++r) {
        const int64_t k = c.index[size_t(r)];
        const std::vector<double> x = row_of("x", r), g = row_of("grad_out", r), h = row_of("shift", k),
                                  sc = row_of("scale", k);
        RowSinks s;
        s.col_slot = col_slot.data();
        s.dweight = dw.data();
        s.dscale = dsc.data() + k * nc;
        if (r % 3 == 0) {
          s.out = out.data() + r * dim;
          s.dx = dx.data() + r * dim;
        }
        reference_row(c.dtype, dim, c.scalar("eps"), RowIn{x.data(), g.data(), w.data(), h.data(), sc.data()}, s,
                      scratch);
      }
      for (int64_t r = 0; r < c.rows; r += 3)
        for (int64_t j = 0; j < dim; ++j) {
          const size_t i = size_t(r * dim + j);
          ASSERT_TRUE(same_expected(out[i], ref["out"][i])) << describe(c) << " out[" << r << "," << j << "]";
          ASSERT_TRUE(same_expected(dx[i], ref["dx"][i])) << describe(c) << " dx[" << r << "," << j << "]";
          or_bits_seen += out[i].or_bits;
        }
      for (int64_t j = 0; j < dim; ++j) {
        const int64_t n = col_slot[size_t(j)];
        if (n < 0) continue;
        const Expected e = dw[size_t(n)].expected(c.dtype);
        ASSERT_TRUE(same_expected(e, ref["dweight"][size_t(j)])) << describe(c) << " dweight[" << j << "]";
        or_nan_sums += e.or_nan;
        for (int64_t k = 0; k < c.gates; ++k) {
          const Expected d = dsc[size_t(k * nc + n)].expected(c.dtype);
          ASSERT_TRUE(same_expected(d, ref["dscale"][size_t(k * dim + j)])) << describe(c) << " dscale[" << k << "," << j << "]";
          or_nan_sums += d.or_nan;
        }
      }
    }
  }
  EXPECT_GT(or_bits_seen, 20);  // huge rows were judged with their second outcome
  EXPECT_GT(or_nan_sums, 0);
}

}  // namespace
}  // namespace gatecheck::testing
