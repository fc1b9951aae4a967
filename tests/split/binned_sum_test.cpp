// kernels/binned_sum.h: the same words for every order and every split (any
// combine order), and the value it promises: the sum of the terms truncated
// at the window the largest term sets, rounded once. Each check is also run
// on planted mistakes, which it must catch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "kernels/binned_sum.h"
#include "tests/split/binned_words.h"
#include "kernels/exact_sum.h"

namespace gatecheck {
namespace {

using State = std::vector<uint64_t>;

// A way to sum: a part's state, the combine of two states, the finish (fp32
// bits). The real binned sum and planted mistakes go through the same checks.
struct Summer {
  std::function<State(const std::vector<float>&)> partial;
  std::function<State(const State&, const State&)> combine;
  std::function<uint32_t(const State&)> finish;
};

State binned_partial(const std::vector<float>& t) { return binned_words<BinnedSum>(t); }
State binned_combined(const State& a, const State& b) {
  State w = a;
  binned_combine(w.data(), b.data());
  return w;
}
uint32_t binned_f32(const State& w) { return float_bits(binned_finish_words<float>(w.data())); }

const Summer kBinned{binned_partial, binned_combined, binned_f32};

// Planted: each part keeps the window its own largest term sets, and the
// parts' kept values are then added exactly (no alignment to the larger top
// bin): the window is the local max's, not the global one's.
State exact_of_binned(const State& b) {
  BinnedSum s;
  s.from_words(b.data());
  State w(kExactSumWords, 0);
  const int64_t d[3] = {s.d0, s.d1, s.d2};
  for (int k = 0; k < 3; ++k) {
    if (int(s.top) - k < 0 || !d[k]) continue;
    for (int bit = 0; bit < 64; ++bit) {  // d * 2^(32 (top - k)) as fp32 terms of one bit each (exact)
      const uint64_t mag = d[k] < 0 ? uint64_t(-d[k]) : uint64_t(d[k]);
      if (!((mag >> bit) & 1u)) continue;
      const float one = std::ldexp(d[k] < 0 ? -1.0f : 1.0f, bit + kBinBits * (int(s.top) - k) - 149);
      exact_sum_add(w.data(), one);
    }
    exact_sum_normalise(w.data());
  }
  return w;
}
const Summer kLocalWindow{[](const std::vector<float>& t) { return exact_of_binned(binned_partial(t)); },
                          [](const State& a, const State& b) {
                            State w = a;
                            exact_sum_combine(w.data(), b.data());
                            exact_sum_normalise(w.data());
                            return w;
                          },
                          [](const State& w) { return float_bits(exact_sum_finish<float>(w.data())); }};

// Planted: the combine aligns a state two top bins below the other by one
// digit only (the digits of two bins meet at the wrong weight).
const Summer kShortShift{binned_partial,
                         [](const State& a, const State& b) {
                           BinnedSum x, y;
                           x.from_words(a.data());
                           y.from_words(b.data());
                           BinnedSum& lo = x.top < y.top ? x : y;
                           const BinnedSum& hi = x.top < y.top ? y : x;
                           if (hi.top - lo.top == 2) lo.raise_top(hi.top - 1), lo.top = hi.top;
                           x.merge(y);
                           State w(kBinnedWords);
                           x.to_words(w.data());
                           return w;
                         },
                         binned_f32};

// Planted: the window's lowest digit is lost (a share that should be kept).
const Summer kLostDigit{[](const std::vector<float>& t) {
                          State w = binned_partial(t);
                          w[2] = 0;
                          return w;
                        },
                        binned_combined, binned_f32};

float random_term(std::mt19937_64& rng, int emin, int emax) {
  std::uniform_int_distribution<int> ex(emin, emax);
  std::uniform_int_distribution<uint32_t> mant(0, (1u << 23) - 1);
  const float v = std::ldexp(1.0f + float(mant(rng)) / float(1u << 23), ex(rng));
  return rng() & 1 ? -v : v;
}

// Terms over a wide exponent range, with cancellation: the window drops some.
std::vector<float> wide_terms(std::mt19937_64& rng, int n) {
  std::vector<float> t;
  for (int i = 0; i < n; ++i) t.push_back(random_term(rng, -100, 60));
  if (n > 2 && rng() % 2) t.push_back(-t[0]);  // cancels the first term exactly
  return t;
}

// The terms cut into parts (random sizes, some empty), each part's state
// combined in a random order: the first such split whose finished bits or
// words differ from the whole's, as a message (empty: none).
std::string split_failure(const Summer& s, int trials, uint64_t seed, bool compare_words) {
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < trials; ++trial) {
    std::vector<float> t = wide_terms(rng, 1 + int(rng() % 200));
    const State whole = s.partial(t);
    std::shuffle(t.begin(), t.end(), rng);
    const int parts = 1 + int(rng() % 9);
    std::vector<std::vector<float>> cut(static_cast<size_t>(parts));
    for (float x : t) cut[rng() % size_t(parts)].push_back(x);
    std::vector<State> states;
    for (const auto& c : cut) states.push_back(s.partial(c));
    std::shuffle(states.begin(), states.end(), rng);
    State acc = states[0];
    for (size_t i = 1; i < states.size(); ++i) acc = s.combine(acc, states[i]);
    if (s.finish(acc) != s.finish(whole) || (compare_words && acc != whole))
      return "trial " + std::to_string(trial) + ": " + std::to_string(parts) + " parts differ from the whole";
  }
  return "";
}

TEST(BinnedSum, SameWordsForEverySplitAndCombineOrder) {
  EXPECT_EQ(split_failure(kBinned, 3000, 1, true), "");
}

// The crafted case: a part whose largest term is tiny keeps a bin that the
// whole batch's window drops; its combine must drop it too.
TEST(BinnedSum, ATinyPartIsCutAtTheGlobalWindow) {
  const std::vector<float> a = {1.0f, -1.0f}, b = {std::ldexp(1.0f, -100)};
  std::vector<float> whole = a;
  whole.insert(whole.end(), b.begin(), b.end());
  for (const Summer* s : {&kBinned, &kLocalWindow}) {
    const uint32_t split = s->finish(s->combine(s->partial(a), s->partial(b)));
    const uint32_t full = s->finish(s->partial(whole));
    if (s == &kBinned) EXPECT_EQ(split, full) << "binned";
    else EXPECT_NE(split, full) << "the local-window mistake must show on the crafted case";
  }
  EXPECT_EQ(binned_f32(binned_partial(whole)), 0u);  // 2^-100 lies below the window 1.0 sets: +0
}

TEST(BinnedSum, SplitCheckCatchesPlantedMistakes) {
  EXPECT_NE(split_failure(kLocalWindow, 3000, 1, false), "") << "window of the local max";
  EXPECT_NE(split_failure(kShortShift, 3000, 1, false), "") << "combine shifting one digit short";
}

// What the finish must give: each term truncated toward zero at the window's
// lowest unit 2^(32 (I - 2) - 149) (I: the largest term's top bin), the
// truncated terms summed exactly (exact_sum.h) and rounded once.
uint32_t reference_bits(const std::vector<float>& t, int precision, int emin, int emax) {
  int top = 0;
  for (float x : t) {
    const uint32_t e = (float_bits(x) >> 23) & 0xffu;
    top = std::max(top, int((e ? e - 1 : 0) >> 5) + 1);
  }
  const int unit = kBinBits * (top - 2) - 149;
  State w(kExactSumWords, 0);
  for (size_t i = 0; i < t.size(); ++i) {
    const double kept = std::trunc(std::ldexp(double(t[i]), -unit));  // exact: a scaled double, truncated
    exact_sum_add(w.data(), float(std::ldexp(kept, unit)));          // fewer bits than t: exact in fp32
    if ((i + 1) % kExactSumNormaliseEvery == 0) exact_sum_normalise(w.data());
  }
  exact_sum_normalise(w.data());
  return exact_sum_round_fp32_bits(w.data(), precision, emin, emax);
}

std::string value_failure(const Summer& s, int trials, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < trials; ++trial) {
    const std::vector<float> t = wide_terms(rng, 1 + int(rng() % 300));
    const uint32_t got = s.finish(s.partial(t)), want = reference_bits(t, 24, -126, 127);
    if (got != want) return "trial " + std::to_string(trial) + ": " + std::to_string(bits_float(got)) + " vs " +
                            std::to_string(bits_float(want));
  }
  return "";
}

TEST(BinnedSum, TheKeptSharesSummedExactlyAndRoundedOnce) {
  EXPECT_EQ(value_failure(kBinned, 3000, 7), "");
  EXPECT_NE(value_failure(kLostDigit, 3000, 7), "") << "a lost digit must show";
  // and in the 16-bit formats
  std::mt19937_64 rng(8);
  for (int trial = 0; trial < 2000; ++trial) {
    const std::vector<float> t = wide_terms(rng, 1 + int(rng() % 300));
    const State w = binned_partial(t);
    ASSERT_EQ(float_bits(to_float(binned_finish_words<bf16_t>(w.data()))), reference_bits(t, 8, -126, 127));
    ASSERT_EQ(float_bits(to_float(binned_finish_words<f16_t>(w.data()))), reference_bits(t, 11, -14, 15));
  }
}

// Terms within 32 bits of the largest top bin are kept whole: the finish is
// the correctly rounded exact sum (checked against a double that holds it).
TEST(BinnedSum, CorrectlyRoundedWhenNothingFallsOutOfTheWindow) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<float> t;
    double exact = 0;
    for (int i = 0, n = 1 + int(rng() % 500); i < n; ++i) {
      t.push_back(random_term(rng, -8, 8));
      exact += double(t.back());
    }
    ASSERT_EQ(binned_finish_words<float>(binned_partial(t).data()), float(exact)) << "trial " << trial;
  }
}

// ... and whenever no |term| is below 2^-40 of the largest, however the sum
// cancels: the exact sum (exact_sum.h) rounded once, in every format.
TEST(BinnedSum, CorrectlyRoundedWithin40BitsOfTheLargest) {
  std::mt19937_64 rng(13);
  for (int trial = 0; trial < 3000; ++trial) {
    const int top = -100 + int(rng() % 220);
    std::vector<float> t;
    State exact(kExactSumWords, 0);
    for (int i = 0, n = 1 + int(rng() % 300); i < n; ++i) {
      t.push_back(random_term(rng, top - 39, top));
      exact_sum_add(exact.data(), t.back());
      exact_sum_normalise(exact.data());
    }
    if (rng() % 2) t.push_back(-t[0]), exact_sum_add(exact.data(), -t[0]), exact_sum_normalise(exact.data());
    const State w = binned_partial(t);
    ASSERT_EQ(binned_f32(w), float_bits(exact_sum_finish<float>(exact.data()))) << "trial " << trial;
    ASSERT_EQ(float_bits(to_float(binned_finish_words<bf16_t>(w.data()))),
              float_bits(to_float(exact_sum_finish<bf16_t>(exact.data()))));
  }
}

// Within the oracle's bound (Higham's gamma_(n-1) * sum|t| plus half an ulp)
// however wide the terms.
TEST(BinnedSum, WithinHighamsBound) {
  std::mt19937_64 rng(12);
  for (int trial = 0; trial < 2000; ++trial) {
    const std::vector<float> t = wide_terms(rng, 2 + int(rng() % 300));
    long double exact = 0, abs_sum = 0;
    for (float x : t) {
      exact += x;
      abs_sum += std::fabs(x);
    }
    const double n = double(t.size()), u = std::ldexp(1.0, -24);
    const double bound = (n - 1) * u / (1 - (n - 1) * u) * double(abs_sum);
    const float got = binned_finish_words<float>(binned_partial(t).data());
    const double ulp = std::ldexp(1.0, std::max(std::ilogb(double(got)) - 23, -149));
    // (the long double sum's own error, below 2^-60 sum|t|, is allowed for)
    ASSERT_LE(std::fabs(double(got) - double(exact)), bound + ulp / 2 + std::ldexp(double(abs_sum), -60))
        << "trial " << trial;
  }
}

TEST(BinnedSum, SpecialTerms) {
  const float inf = INFINITY, nan = NAN;
  auto bits = [](std::vector<float> t) { return binned_f32(binned_partial(t)); };
  EXPECT_EQ(bits({1.0f, inf}), 0x7f800000u);
  EXPECT_EQ(bits({1.0f, -inf}), 0xff800000u);
  EXPECT_EQ(bits({inf, -inf}), 0x7fc00000u);
  EXPECT_EQ(bits({nan, 1.0f}), 0x7fc00000u);
  EXPECT_EQ(bits({}), 0u);
  EXPECT_EQ(bits({-0.0f}), 0u);
  EXPECT_EQ(bits({1.0f, -1.0f}), 0u);
  // fp32's extremes: the largest finite terms overflow to Inf only in the sum
  const float big = std::ldexp(1.99f, 127);
  EXPECT_EQ(bits({big, big}), 0x7f800000u);
  EXPECT_EQ(bits({big, big, -big}), float_bits(big));
  const float tiny = std::ldexp(1.0f, -149);
  EXPECT_EQ(bits({tiny, tiny, tiny}), float_bits(3 * tiny));
  // counts saturate at 255 in a state and in a combine, and a raw integer
  // sum of such counts (an all-reduce) still reads as non-zero
  std::vector<float> nans(300, nan);
  State w = binned_partial(nans);
  EXPECT_EQ((w[3] >> 16) & 0xffffu, kBinnedMaxCount);
  State raw = w;
  for (int i = 0; i < 3; ++i) raw[3] += w[3] & ~uint64_t(0xff);  // 4 states summed word by word (top kept once)
  EXPECT_EQ(binned_f32(raw), 0x7fc00000u);
}

// The GPU tile's fp64 accumulator gives the integer accumulator's words: for
// tiles of up to 256 terms (wide, subnormal, extreme and special terms, tops
// rising mid-tile).
TEST(BinnedSum, Fp64TileAccumulatorGivesTheSameWords) {
  std::mt19937_64 rng(31);
  const float specials[] = {INFINITY, -INFINITY, NAN, 0.0f, -0.0f, std::ldexp(1.0f, -149), -std::ldexp(1.5f, -140),
                            std::ldexp(1.99f, 127), -std::ldexp(1.0f, 127), std::ldexp(1.0f, -126)};
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<float> t;
    const int n = 1 + int(rng() % 256);
    const int lo = -149 + int(rng() % 200), hi = std::min(127, lo + int(rng() % 120));
    for (int i = 0; i < n; ++i)
      t.push_back(rng() % 16 == 0 ? specials[rng() % 10] : std::ldexp(random_term(rng, 0, 0), lo + int(rng() % size_t(hi - lo + 1))));
    const State want = binned_partial(t);
    ASSERT_EQ(binned_words<BinnedFp64Sum>(t), want) << "trial " << trial;
  }
  // a planted mistake: rounding to nearest instead of toward zero must differ
  int differ = 0;
  for (int trial = 0; trial < 200; ++trial) {
    BinnedFp64Sum f;
    f.clear();
    std::vector<float> t;
    for (int i = 0; i < 50; ++i) t.push_back(random_term(rng, -60, 20));
    for (float x : t) f.add(x);
    // the nearest-rounding split of the top digit's shares
    double s0 = 0;
    for (float x : t) {
      const double a = std::fabs(double(x)), q = (a + f.c0) - f.c0;
      s0 += x < 0 ? -q : q;
    }
    differ += s0 != f.s0;
  }
  EXPECT_GT(differ, 0);
}

// The all-reduce's steps on words: MAX of the top bins, each state aligned to
// it (binned_align), then an integer SUM of every word but the top bin's:
// the same words as the combine.
TEST(BinnedSum, AllReduceStepsGiveTheCombinesWords) {
  std::mt19937_64 rng(21);
  for (int trial = 0; trial < 500; ++trial) {
    std::vector<State> states;
    for (int r = 0; r < 1 + int(rng() % 8); ++r) states.push_back(binned_partial(wide_terms(rng, int(rng() % 50))));
    State combined = states[0];
    for (size_t i = 1; i < states.size(); ++i) binned_combine(combined.data(), states[i].data());
    uint32_t top = 0;
    for (const State& s : states) top = std::max(top, uint32_t(s[3] & 0xffu));
    State sum(kBinnedWords, 0);
    for (State s : states) {
      binned_align(s.data(), top);
      s[3] &= ~uint64_t(0xff);
      for (int i = 0; i < kBinnedWords; ++i) sum[size_t(i)] += s[size_t(i)];
    }
    sum[3] |= top;
    BinnedSum canon;  // counts saturated as the combine keeps them
    canon.from_words(sum.data());
    canon.to_words(sum.data());
    ASSERT_EQ(sum, combined) << "trial " << trial;
  }
}

}  // namespace
}  // namespace gatecheck
