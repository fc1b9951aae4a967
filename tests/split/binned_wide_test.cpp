// kernels/binned_wide.h, as the CUDA reproducible modes use it: terms cut
// into runs (the GPU's threads' register sums, BinnedFp64Sum), each run's
// state added to a wide sum in any order, give the words of BinnedSum over
// all the terms; and a wide sum that kept only the final window's bins as
// each run found them (a planted mistake) does not.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/binned_sum.h"
#include "tests/split/binned_words.h"
#include "kernels/binned_wide.h"

namespace gatecheck {
namespace {

using State = std::vector<uint64_t>;

// A run's state as a GPU thread keeps it (the fp64 accumulator).
State run_words(const std::vector<float>& t) { return binned_words<BinnedFp64Sum>(t); }

// A term of exponent lo to hi, or (one in 32, where `specials`) a special or extreme value.
float term(std::mt19937_64& rng, int lo, int hi, bool specials = true) {
  const float special[] = {INFINITY, -INFINITY, NAN, 0.0f, -0.0f, std::ldexp(1.0f, -149), std::ldexp(1.99f, 127),
                           -std::ldexp(1.0f, 127)};
  if (specials && rng() % 32 == 0) return special[rng() % 8];
  const float m = 1.0f + float(rng() % (1u << 23)) / float(1u << 23);
  const float v = std::ldexp(m, lo + int(rng() % uint64_t(hi - lo + 1)));
  return rng() & 1 ? -v : v;
}

// Terms cut into runs of random lengths (one term to all of them), the runs'
// states added in a shuffled order: the words of the whole, every time.
TEST(BinnedWide, RunsAddedInAnyOrderGiveTheWholesWords) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 4000; ++trial) {
    const int n = 1 + int(rng() % 600);
    const int lo = -149 + int(rng() % 250), hi = std::min(127, lo + int(rng() % 140));
    std::vector<float> t;
    for (int i = 0; i < n; ++i) t.push_back(term(rng, lo, hi));
    if (n > 3 && rng() % 3 == 0) t.push_back(-t[1]);  // exact cancellation
    std::vector<State> runs;
    for (size_t at = 0; at < t.size();) {
      const size_t len = std::min(t.size() - at, size_t(1 + rng() % (rng() % 2 ? 4 : 300)));
      runs.push_back(run_words(std::vector<float>(t.begin() + ptrdiff_t(at), t.begin() + ptrdiff_t(at + len))));
      at += len;
    }
    std::shuffle(runs.begin(), runs.end(), rng);
    BinnedWide wide;
    for (const State& r : runs) wide.add(r.data());
    State got(kBinnedWords);
    wide.to_words(got.data());
    ASSERT_EQ(got, binned_words<BinnedSum>(t)) << "trial " << trial << ", " << t.size() << " terms in " << runs.size() << " runs";
  }
}

// No terms, only special terms, and counts past the cap: a state's words.
TEST(BinnedWide, EmptySpecialAndSaturatedCounts) {
  BinnedWide empty;
  State got(kBinnedWords);
  empty.to_words(got.data());
  EXPECT_EQ(got, binned_words<BinnedSum>({}));
  BinnedWide nan_only;
  std::vector<float> nans(300, NAN);
  for (int i = 0; i < 3; ++i) nan_only.add(run_words(std::vector<float>(nans.begin() + i * 100, nans.begin() + i * 100 + 100)).data());
  nan_only.to_words(got.data());
  EXPECT_EQ(got, binned_words<BinnedSum>(nans));
  std::vector<float> mixed(400, INFINITY);
  for (size_t i = 0; i < mixed.size(); i += 2) mixed[i] = -1.5f;
  BinnedWide m;
  m.add(run_words(std::vector<float>(mixed.begin(), mixed.begin() + 200)).data());
  m.add(run_words(std::vector<float>(mixed.begin() + 200, mixed.end())).data());
  m.to_words(got.data());
  EXPECT_EQ(got, binned_words<BinnedSum>(mixed));
}

// Planted: each run's digits put where the run's own top says, but the wide
// sum then reads the window of the first run's top instead of the largest:
// the check above must catch it.
TEST(BinnedWide, AWindowReadAtTheWrongTopIsCaught) {
  std::mt19937_64 rng(11);
  int caught = 0;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<float> small, large;
    for (int i = 0; i < 20; ++i) small.push_back(term(rng, -60, -40, false));
    for (int i = 0; i < 20; ++i) large.push_back(term(rng, 10, 30, false));
    const State a = run_words(small), b = run_words(large);
    BinnedWide wide;
    wide.add(a.data());
    wide.add(b.data());
    wide.top = uint32_t(a[3] & 0xffu);  // the mistake
    State got(kBinnedWords);
    wide.to_words(got.data());
    std::vector<float> all = small;
    all.insert(all.end(), large.begin(), large.end());
    caught += got != binned_words<BinnedSum>(all);
  }
  EXPECT_EQ(caught, 200);
}

}  // namespace
}  // namespace gatecheck
