// kernels/exact_sum.h: exact, order- and split-independent, correctly rounded.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/exact_sum.h"

namespace gatecheck {
namespace {

using State = std::vector<uint64_t>;

State state_of(const std::vector<float>& terms) {
  State w(kExactSumWords, 0);
  for (size_t i = 0; i < terms.size(); ++i) {
    exact_sum_add(w.data(), terms[i]);
    if ((i + 1) % kExactSumNormaliseEvery == 0) exact_sum_normalise(w.data());
  }
  exact_sum_normalise(w.data());
  return w;
}

uint32_t f32_bits_of(const State& w) { return float_bits(exact_sum_finish<float>(w.data())); }

// d (exact in a double) rounded once to nearest even to p significand bits
// (normal range only).
double round_to_bits(double d, int p) {
  if (d == 0) return 0;
  int e;
  const double m = std::frexp(d, &e);  // d = m * 2^e, 0.5 <= |m| < 1
  return std::ldexp(std::nearbyint(std::ldexp(m, p)), e - p);
}

float random_term(std::mt19937_64& rng, int emin, int emax) {
  std::uniform_int_distribution<int> ex(emin, emax);
  std::uniform_int_distribution<uint32_t> mant(0, (1u << 23) - 1);
  const float v = std::ldexp(1.0f + float(mant(rng)) / float(1u << 23), ex(rng));
  return rng() & 1 ? -v : v;
}

// Sums that a double holds exactly (bits 2^-33 .. 2^19): one rounding of that
// double to each format is the correctly rounded sum, which the finish must give.
TEST(ExactSum, CorrectlyRoundedWhereADoubleIsExact) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 2000; ++trial) {
    const int n = 1 + int(rng() % 600);
    std::vector<float> t;
    double exact = 0;
    for (int i = 0; i < n; ++i) {
      t.push_back(random_term(rng, -10, 9));
      exact += double(t.back());
    }
    const State w = state_of(t);
    ASSERT_EQ(exact_sum_finish<float>(w.data()), float(round_to_bits(exact, 24))) << "trial " << trial;
    const float bf = to_float(exact_sum_finish<bf16_t>(w.data()));
    ASSERT_EQ(bf, float(round_to_bits(exact, 8))) << "trial " << trial;
    if (std::fabs(exact) < 60000 && std::fabs(exact) > 1.0 / 16384) {
      const float h = to_float(exact_sum_finish<f16_t>(w.data()));
      ASSERT_EQ(h, float(round_to_bits(exact, 11))) << "trial " << trial;
    }
  }
}

// The same words, so the same result, for every order and every split of the
// terms, over fp32's whole range (subnormals to 2^127).
TEST(ExactSum, SameWordsForEveryOrderAndSplit) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<float> t;
    const int n = 2 + int(rng() % 500);
    for (int i = 0; i < n; ++i) t.push_back(random_term(rng, -149, 120));
    const State whole = state_of(t);
    std::shuffle(t.begin(), t.end(), rng);
    const int k = 2 + int(rng() % 64);
    std::vector<std::vector<float>> parts(static_cast<size_t>(k));
    for (float v : t) parts[rng() % size_t(k)].push_back(v);
    State acc(kExactSumWords, 0);
    for (const auto& p : parts) exact_sum_combine(acc.data(), state_of(p).data());
    State acc_norm = acc;
    exact_sum_normalise(acc_norm.data());
    ASSERT_EQ(acc_norm, whole) << "trial " << trial << ", " << k << " parts";
    ASSERT_EQ(f32_bits_of(acc), f32_bits_of(whole));  // the finish reads a raw integer sum too
  }
}

TEST(ExactSum, ExtremesCancelExactly) {
  const float big = std::ldexp(1.0f, 127), tiny = std::ldexp(1.0f, -149);
  EXPECT_EQ(f32_bits_of(state_of({big, tiny, -big})), 0x00000001u);
  EXPECT_EQ(f32_bits_of(state_of({-big, tiny, big, -tiny, -tiny})), 0x80000001u);
  EXPECT_EQ(f32_bits_of(state_of({big, -big})), 0x00000000u);     // an exact zero is +0
  EXPECT_EQ(f32_bits_of(state_of({-0.0f, -0.0f})), 0x00000000u);  // (either zero is right here)
  EXPECT_EQ(f32_bits_of(state_of({big, big})), 0x7f800000u);      // 2^128 overflows
  EXPECT_EQ(f32_bits_of(state_of({-big, -big, big})), 0xff000000u);
  // 1 + 2^-24 + 2^-24: any fp32 order from 1 rounds twice to 1; exactly it is 1 + 2^-23.
  EXPECT_EQ(f32_bits_of(state_of({1.0f, std::ldexp(1.0f, -24), std::ldexp(1.0f, -24)})), 0x3f800001u);
}

// Ties go to even, in every format.
TEST(ExactSum, TiesToEven) {
  const float u = std::ldexp(1.0f, -24);
  EXPECT_EQ(f32_bits_of(state_of({1.0f, u})), 0x3f800000u);                            // 1 + half an ulp: down
  EXPECT_EQ(f32_bits_of(state_of({1.0f + 2 * u, u})), 0x3f800002u);                    // odd + half: up
  EXPECT_EQ(f32_bits_of(state_of({1.0f, u, std::ldexp(1.0f, -60)})), 0x3f800001u);     // past half: up
  EXPECT_EQ(exact_sum_finish<bf16_t>(state_of({1.0f, std::ldexp(1.0f, -8)}).data()).bits, 0x3f80u);
  EXPECT_EQ(exact_sum_finish<f16_t>(state_of({1.0f, std::ldexp(1.0f, -11)}).data()).bits, 0x3c00u);
}

// 2^17 terms that each fill a digit to its top bit: the digits stay exact
// only if they are normalised often enough.
TEST(ExactSum, ManyLargeDigitsStayExact) {
  const float t = std::ldexp(float((1u << 24) - 1), 32 - 149 + 56);  // bits 88..111 of digit 1 ... its top
  std::vector<float> terms(size_t(1) << 17, t);
  const double exact = double(t) * double(terms.size());
  EXPECT_EQ(exact_sum_finish<float>(state_of(terms).data()), float(round_to_bits(exact, 24)));
}

// The device's scheme (cuda-repro): local states flushed into a shared one
// by adds that may overflow a word's 64 bits, in any order; the carries move
// up, and the normalised result is the words of the sum taken in one state.
TEST(ExactSum, CarryingFlushesInAnyOrderGiveTheSameWords) {
  std::mt19937_64 rng(17);
  const float big = std::ldexp(float((1u << 24) - 1), 32 - 149);  // fills digit 0 to its top bit
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<std::vector<float>> parts(600);
    std::vector<float> all;
    for (auto& p : parts)
      for (int i = 0; i < 3; ++i) {
        p.push_back(rng() % 4 ? big : random_term(rng, -149, 100));
        all.push_back(p.back());
      }
    std::shuffle(parts.begin(), parts.end(), rng);
    State g(kExactSumWords, 0);
    int carried = 0;
    for (const auto& p : parts)
      exact_sum_add_carrying(g.data(), state_of(p).data(), [&](uint64_t* base, int k, uint64_t v) {
        const uint64_t old = base[k];
        base[k] += v;
        carried += k < 4 && base[k] < old;
        return old;
      });
    exact_sum_normalise_unsigned(g.data());
    ASSERT_GT(carried, 0) << "no word passed 2^64: the test would not test the carries";
    ASSERT_EQ(g, state_of(all)) << "trial " << trial;
  }
}

TEST(ExactSum, SpecialValues) {
  const float inf = INFINITY, nan = NAN;
  EXPECT_EQ(f32_bits_of(state_of({1.0f, nan})), 0x7fc00000u);
  EXPECT_EQ(f32_bits_of(state_of({inf, 1.0f, inf})), 0x7f800000u);
  EXPECT_EQ(f32_bits_of(state_of({-inf, 1e30f})), 0xff800000u);
  EXPECT_EQ(f32_bits_of(state_of({inf, -inf})), 0x7fc00000u);
}

// One rounding to the dtype, not two: 1 + 2^-8 + 2^-30 is above bf16's
// midpoint 1 + 2^-8, so it rounds up; through fp32 it would round to the
// midpoint first and then to even (1).
TEST(ExactSum, OneRoundingToBf16) {
  const State w = state_of({1.0f, std::ldexp(1.0f, -8), std::ldexp(1.0f, -30)});
  EXPECT_EQ(exact_sum_finish<bf16_t>(w.data()).bits, 0x3f81u);
  EXPECT_EQ(round_to<bf16_t>(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -30)).bits, 0x3f80u);
  // bf16's overflow threshold (2 - 2^-8) * 2^127 is a tie: to even, Inf; just below it, bf16's largest.
  const float a = std::ldexp(1.0f, 127);
  EXPECT_EQ(exact_sum_finish<bf16_t>(state_of({a, a * (1 - std::ldexp(1.0f, -8))}).data()).bits, 0x7f80u);
  EXPECT_EQ(exact_sum_finish<bf16_t>(state_of({a, a * (1 - std::ldexp(1.0f, -8) - std::ldexp(1.0f, -20))}).data()).bits,
            0x7f7fu);
  // Below bf16's smallest subnormal 2^-133, by less than half of it: +0.
  EXPECT_EQ(exact_sum_finish<bf16_t>(state_of({std::ldexp(3.0f, -149)}).data()).bits, 0x0000u);
  EXPECT_EQ(exact_sum_finish<f16_t>(state_of({65504.0f, 16.0f}).data()).bits, 0x7c00u);  // fp16's tie: Inf
  EXPECT_EQ(exact_sum_finish<f16_t>(state_of({65504.0f, 15.0f}).data()).bits, 0x7bffu);
}

}  // namespace
}  // namespace gatecheck
