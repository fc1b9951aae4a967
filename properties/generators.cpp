#include "generators.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "plan_movement.h"
#include "prng.h"

namespace gatecheck {

// ---- named lists --------------------------------------------------------------

const std::vector<std::string>& all_index_patterns() {
  static const std::vector<std::string> v = {
      "single_gate",      // every row uses one gate: one long segment
      "identity",         // row r uses gate r % gates
      "sorted_equal",     // sorted segments of equal length
      "sorted_random",    // sorted segments of random length
      "reversed",         // sorted segments in descending gate order
      "uniform",          // each row a uniform random gate
      "giant_plus_tiny",  // one giant segment among many tiny ones
      "unused_gates",     // only some gates are used; the rest must get grad_gate 0
      "h3_shared",        // H3: one index of length S tiled across rows/S sequences
      "max_index_heavy",  // most rows use the largest gate id
  };
  return v;
}

const std::vector<std::string>& all_value_classes() {
  static const std::vector<std::string> v = {
      "small_int",        // integers in [-4, 4]: products and sums are exact
      "signed_zero",      // mostly +0 and -0: the sign of zero must come out right
      "normal",           // N(0,1), gate x 0.1 (the prior art's data)
      "mixed_magnitude",  // N(0,1) scaled by 2^k over the dtype's range
      "order_sensitive",  // large cancelling terms among small ones: summation order shows
      "subnormal",        // subnormals and tiny normals
      "near_overflow",    // close to the dtype's largest finite value
      "nan_inf",          // N(0,1) with rare NaN and +-Inf
  };
  return v;
}

const std::vector<std::string>& all_plan_kinds() {
  static const std::vector<std::string> v = {
      "singletons",   // rows alone
      "partition",    // random contiguous partition
      "reversal",     // the whole batch reversed, and a reversed prefix
      "permutation",  // the whole batch permuted, and a permuted subset
      "probe",        // a probe row at the front, middle and back of random batches
      "thresholds",   // contiguous sub-batches of 2^k-1, 2^k, 2^k+1 rows
      "prior_art",    // sub-batch sizes 1, 7, 4097, 32768, 65536 scaled to the rows
      "repeat",       // rows repeated inside a batch; whole-case reruns
      "gate_groups",  // each batch: all rows of a group of gates, in row order
  };
  return v;
}

namespace edges {
const std::vector<int64_t>& rows() {
  static const std::vector<int64_t> v = {0,   1,   2,   3,   7,   8,   9,   15,  16,   17,   31,   32,  33, 63,
                                         64,  65,  127, 128, 129, 255, 256, 257, 511, 512,  513, 1023, 1024, 1025};
  return v;
}
const std::vector<int64_t>& prime_rows() {
  static const std::vector<int64_t> v = {5, 11, 13, 37, 97, 251, 509, 769, 1021, 1031};
  return v;
}
const std::vector<int64_t>& dims() {
  static const std::vector<int64_t> v = {1,  2,  3,  4,   5,   6,   7,   8,   9,   15,
                                         16, 17, 31, 32,  33,  127, 128, 129, 255, 256, 257};
  return v;
}
const std::vector<int64_t>& big_dims() {
  static const std::vector<int64_t> v = {3072, 5376};
  return v;
}
const std::vector<int64_t>& gates() {
  static const std::vector<int64_t> v = {1, 2, 3, 9};
  return v;
}
}  // namespace edges

GenLimits limits_for_property(const std::string& property, const GenLimits& base) {
  GenLimits l = base;
  if (property == "row_invariance" || property == "segment_invariance") {
    l.min_rows = std::max<int64_t>(l.min_rows, 2);
    l.min_dim = std::max<int64_t>(l.min_dim, 1);
    l.max_rows = std::max(l.max_rows, l.min_rows);
    l.max_dim = std::max(l.max_dim, l.min_dim);
  }
  if (property == "segment_invariance") {
    // One gate for every row leaves no way to move a whole segment.
    auto& p = l.index_patterns;
    p.erase(std::remove(p.begin(), p.end(), "single_gate"), p.end());
    if (p.empty()) p = {"uniform"};
    // Plans whose batches hold whole segments; gate_groups always does.
    std::vector<std::string> kinds;
    for (const auto& k : l.plan_kinds)
      if (k == "gate_groups" || k == "singletons" || k == "partition" || k == "probe" || k == "prior_art")
        kinds.push_back(k);
    kinds.push_back("gate_groups");
    kinds.push_back("gate_groups");  // weight it: it never comes out vacuous
    l.plan_kinds = kinds;
  }
  return l;
}

// ---- shape generators -----------------------------------------------------------

namespace {

// The largest row count at this RapidCheck size: small cases first, the full
// range from size 100 on (never below a few rows so edges are still drawn).
int64_t rows_cap(const GenLimits& l, int size) {
  const int64_t floor_cap = std::min<int64_t>(l.max_rows, 17);
  const int64_t scaled = l.max_rows * std::min(size, 100) / 100;
  return std::max({l.min_rows, floor_cap, scaled});
}

std::vector<int64_t> within(const std::vector<int64_t>& v, int64_t lo, int64_t hi) {
  std::vector<int64_t> out;
  for (int64_t x : v)
    if (x >= lo && x <= hi) out.push_back(x);
  return out;
}

// Picks one of several generators by weight, skipping those with weight 0.
rc::Gen<int64_t> weighted(std::vector<std::pair<int, rc::Gen<int64_t>>> options) {
  std::vector<std::pair<int, rc::Gen<int64_t>>> live;
  for (auto& o : options)
    if (o.first > 0) live.push_back(o);
  if (live.empty()) throw std::logic_error("weighted: no generator left");
  std::vector<int> prefix;
  int total = 0;
  for (auto& o : live) prefix.push_back(total += o.first);
  return rc::gen::mapcat(rc::gen::inRange(0, total), [live, prefix](int pick) {
    const size_t i = size_t(std::upper_bound(prefix.begin(), prefix.end(), pick) - prefix.begin());
    return live[i].second;
  });
}

}  // namespace

rc::Gen<int64_t> gen_rows(const GenLimits& l) {
  return rc::Gen<int64_t>([l](const rc::Random& random, int size) {
    const int64_t cap = rows_cap(l, size);
    const auto e = within(edges::rows(), l.min_rows, cap);
    const auto p = within(edges::prime_rows(), l.min_rows, cap);
    auto g = weighted({{e.empty() ? 0 : 5, e.empty() ? rc::gen::just(int64_t(0)) : rc::gen::elementOf(e)},
                       {p.empty() ? 0 : 1, p.empty() ? rc::gen::just(int64_t(0)) : rc::gen::elementOf(p)},
                       {3, rc::gen::inRange<int64_t>(l.min_rows, cap + 1)}});
    return g(random, size);
  });
}

rc::Gen<int64_t> gen_dim(const GenLimits& l, int64_t rows) {
  const auto e = within(edges::dims(), std::max<int64_t>(l.min_dim, 1), l.max_dim);
  const auto big = within(edges::big_dims(), l.min_dim, std::numeric_limits<int64_t>::max());
  const bool big_ok = l.big_dims && rows <= l.big_dim_max_rows && !big.empty();
  const int64_t lo = std::max<int64_t>(l.min_dim, 1), hi = std::max(lo, l.max_dim);
  // odd sizes: no vector width divides them
  auto odd = rc::gen::map(rc::gen::inRange<int64_t>(0, (hi - lo) / 2 + 1), [lo, hi](int64_t k) {
    const int64_t v = (lo | 1) + 2 * k;
    return v > hi ? hi : v;
  });
  return weighted({{l.min_dim == 0 ? 1 : 0, rc::gen::just(int64_t(0))},  // empty problem
                   {e.empty() ? 0 : 6, e.empty() ? rc::gen::just(int64_t(lo)) : rc::gen::elementOf(e)},
                   {2, odd},
                   {2, rc::gen::inRange<int64_t>(lo, hi + 1)},
                   {big_ok ? 3 : 0, big_ok ? rc::gen::elementOf(big) : rc::gen::just(int64_t(lo))}});
}

rc::Gen<int64_t> gen_gates(const GenLimits& l, int64_t rows, const std::string& pattern) {
  const int64_t cap = std::max<int64_t>(l.max_gates, 1);
  // unused_gates needs a gate to leave unused; segment patterns read best with a few.
  const int64_t lo = pattern == "unused_gates" ? std::min<int64_t>(2, cap) : 1;
  const auto e = within(edges::gates(), lo, cap);
  auto clamp = [lo, cap](int64_t g) { return std::max(lo, std::min(cap, g)); };
  // about rows: rows-1, rows, rows+1; more than rows: unused gates at the top
  auto about = rc::gen::map(rc::gen::inRange<int64_t>(-1, 2), [rows, clamp](int64_t d) { return clamp(rows + d); });
  auto more = rc::gen::map(rc::gen::inRange<int64_t>(1, 9), [rows, clamp](int64_t d) { return clamp(rows + d); });
  return weighted({{e.empty() ? 0 : 5, e.empty() ? rc::gen::just(int64_t(lo)) : rc::gen::elementOf(e)},
                   {2, about},
                   {1, more},
                   {2, rc::gen::inRange<int64_t>(lo, cap + 1)}});
}

// ---- index patterns ---------------------------------------------------------------

namespace {

// Cuts [0, rows) into `n` contiguous segments, random (or equal) lengths >= 1
// when rows >= n. Returns segment starts plus rows at the end.
std::vector<int64_t> cuts(int64_t rows, int64_t n, bool equal, Prng& rng) {
  n = std::max<int64_t>(1, std::min(n, std::max<int64_t>(rows, 1)));
  std::vector<int64_t> c = {0};
  if (equal) {
    for (int64_t i = 1; i < n; ++i) c.push_back(rows * i / n);
  } else {
    std::vector<int64_t> pts;
    for (int64_t i = 1; i < rows; ++i) pts.push_back(i);
    for (int64_t i = 0; i < n - 1 && i < int64_t(pts.size()); ++i) std::swap(pts[size_t(i)], pts[size_t(i + rng.below(int64_t(pts.size()) - i))]);
    pts.resize(size_t(std::min<int64_t>(n - 1, int64_t(pts.size()))));
    std::sort(pts.begin(), pts.end());
    c.insert(c.end(), pts.begin(), pts.end());
  }
  c.push_back(rows);
  return c;
}

// Distinct gates for n segments, ascending, spread over [0, gates).
std::vector<int64_t> ascending_gates(int64_t n, int64_t gates, Prng& rng) {
  std::vector<int64_t> all(static_cast<size_t>(gates));
  std::iota(all.begin(), all.end(), 0);
  for (int64_t i = 0; i < n && i < gates; ++i) std::swap(all[size_t(i)], all[size_t(i + rng.below(gates - i))]);
  all.resize(size_t(std::min(n, gates)));
  std::sort(all.begin(), all.end());
  return all;
}

std::vector<int64_t> sorted_segments(int64_t rows, int64_t gates, bool equal, Prng& rng) {
  std::vector<int64_t> idx(size_t(rows), 0);
  const int64_t n = std::min(gates, std::max<int64_t>(rows, 1));
  const int64_t segs = equal ? n : rng.range(1, n);
  const auto c = cuts(rows, segs, equal, rng);
  const auto g = ascending_gates(int64_t(c.size()) - 1, gates, rng);
  for (size_t s = 0; s + 1 < c.size(); ++s)
    for (int64_t r = c[s]; r < c[s + 1]; ++r) idx[size_t(r)] = g[std::min(s, g.size() - 1)];
  return idx;
}

}  // namespace

std::vector<int64_t> make_index(const std::string& pattern, int64_t rows, int64_t gates, uint64_t seed) {
  Prng rng(seed);
  std::vector<int64_t> idx(size_t(std::max<int64_t>(rows, 0)), 0);
  if (rows <= 0 || gates <= 0) return idx;
  if (pattern == "single_gate") {
    std::fill(idx.begin(), idx.end(), rng.below(gates));
  } else if (pattern == "identity") {
    for (int64_t r = 0; r < rows; ++r) idx[size_t(r)] = r % gates;
  } else if (pattern == "sorted_equal" || pattern == "sorted_random") {
    idx = sorted_segments(rows, gates, pattern == "sorted_equal", rng);
  } else if (pattern == "reversed") {
    idx = sorted_segments(rows, gates, rng.chance(0.5), rng);
    for (auto& k : idx) k = gates - 1 - k;
  } else if (pattern == "uniform") {
    for (auto& k : idx) k = rng.below(gates);
  } else if (pattern == "giant_plus_tiny") {
    // tiny segments of 1-2 rows around one giant segment of about 3/4 of the rows
    const int64_t giant_len = std::max<int64_t>(1, rows * 3 / 4);
    const int64_t giant_at = rng.range(0, rows - giant_len);
    const int64_t giant = rng.below(gates);
    int64_t r = 0;
    while (r < rows) {
      if (r == giant_at) {
        for (int64_t i = 0; i < giant_len; ++i) idx[size_t(r++)] = giant;
        continue;
      }
      const int64_t len = std::min<int64_t>(rng.range(1, 2), (r < giant_at ? giant_at : rows) - r);
      const int64_t k = rng.below(gates);
      for (int64_t i = 0; i < len; ++i) idx[size_t(r++)] = k;
    }
  } else if (pattern == "unused_gates") {
    // a random strict subset of the gates (at least one left unused when gates > 1)
    const int64_t used = std::max<int64_t>(1, gates > 1 ? rng.range(1, gates - 1) : 1);
    const auto pool = ascending_gates(used, gates, rng);
    for (auto& k : idx) k = pool[size_t(rng.below(int64_t(pool.size())))];
  } else if (pattern == "h3_shared") {
    // one index of length S (a divisor of rows) shared by rows/S sequences
    std::vector<int64_t> divisors;
    for (int64_t s = 1; s <= rows; ++s)
      if (rows % s == 0) divisors.push_back(s);
    const int64_t S = divisors[size_t(rng.below(int64_t(divisors.size())))];
    const auto shared = sorted_segments(S, gates, rng.chance(0.5), rng);
    const Status st = expand_shared_index(shared, rows, &idx);
    if (!st.ok()) throw std::logic_error("h3_shared: " + st.message);
  } else if (pattern == "max_index_heavy") {
    for (auto& k : idx) k = rng.chance(0.8) ? gates - 1 : rng.below(gates);
  } else {
    throw std::invalid_argument("unknown index pattern '" + pattern + "'");
  }
  return idx;
}

// ---- value classes ----------------------------------------------------------------

namespace {

double max_finite(DType t) {
  switch (t) {
    case DType::f32: return 3.4028234663852886e38;
    case DType::f16: return 65504.0;
    default: return 3.3895313892515355e38;
  }
}
int min_normal_exp(DType t) { return t == DType::f16 ? -14 : -126; }

// A random subnormal of the dtype, by bits.
uint32_t subnormal_bits(DType t, Prng& rng) {
  const uint32_t sign = rng.chance(0.5) ? 1u : 0u;
  switch (t) {
    case DType::f32: return (sign << 31) | uint32_t(1 + rng.below(0x7fffff));
    case DType::f16: return (sign << 15) | uint32_t(1 + rng.below(0x3ff));
    default: return (sign << 15) | uint32_t(1 + rng.below(0x7f));
  }
}

uint32_t special_bits(DType t, int which) {  // 0 NaN, 1 +Inf, 2 -Inf
  if (t == DType::f32) return which == 0 ? 0x7fc00000u : which == 1 ? 0x7f800000u : 0xff800000u;
  if (t == DType::f16) return which == 0 ? 0x7e00u : which == 1 ? 0x7c00u : 0xfc00u;
  return which == 0 ? 0x7fc0u : which == 1 ? 0x7f80u : 0xff80u;
}

enum class Role { res, gate, y, grad_out };

void fill_tensor(HostTensor& t, Role role, const std::string& cls, Prng& rng, int64_t cols) {
  const DType dt = t.dtype;
  const double mx = max_finite(dt);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const int64_t col = cols ? i % cols : 0, row = cols ? i / cols : 0;
    double v = 0;
    if (cls == "small_int") {
      v = double(rng.range(-4, 4));
    } else if (cls == "signed_zero") {
      const int64_t k = rng.below(10);
      v = k < 3 ? 0.0 : k < 6 ? -0.0 : double(rng.range(-2, 2));
      if (v == 0 && rng.chance(0.5)) v = -0.0;
    } else if (cls == "normal") {
      v = rng.normal() * (role == Role::gate ? 0.1 : 1.0);
    } else if (cls == "mixed_magnitude") {
      const int lo = dt == DType::f16 ? -12 : -40, hi = dt == DType::f16 ? 7 : 40;
      v = rng.normal() * std::ldexp(1.0, int(rng.range(lo, hi)));
    } else if (cls == "order_sensitive") {
      // y: per column a large L, rows alternately +L, -L and small; g ~ 1.
      // The big terms of grad_gate nearly cancel, so the small ones decide the
      // result, and fp32 absorbs them differently in every summation order.
      const int e = dt == DType::f16 ? 8 : 12 + int(col % 9);
      if (role == Role::y) {
        const int64_t m = row % 3;
        v = m == 0 ? std::ldexp(1.0, e) : m == 1 ? -std::ldexp(1.0, e) : rng.uniform() * 0.75 + 0.01;
      } else if (role == Role::grad_out) {
        v = rng.chance(0.9) ? 1.0 : 1.0 + std::ldexp(1.0, -int(rng.range(1, 6)));
      } else if (role == Role::gate) {
        v = rng.normal();
      } else {  // res cancels gate*y roughly: out is small and its rounding order shows
        v = -std::ldexp(1.0, e) * (rng.chance(0.5) ? 1 : -1) * rng.uniform();
      }
    } else if (cls == "subnormal") {
      if (rng.chance(0.5)) {
        t.set_bits(i, subnormal_bits(dt, rng));
        continue;
      }
      v = role == Role::gate ? (0.5 + rng.uniform() * 1.5) * (rng.chance(0.5) ? 1 : -1)
                             : std::ldexp(1.0 + rng.uniform(), min_normal_exp(dt) + int(rng.range(0, 2))) *
                                   (rng.chance(0.5) ? 1 : -1);
    } else if (cls == "near_overflow") {
      const double s = rng.chance(0.5) ? 1 : -1;
      v = role == Role::gate ? s * (0.5 + rng.uniform() * 1.5) : s * mx * (0.25 + 0.75 * rng.uniform());
      if (std::abs(v) > mx) v = s * mx;
    } else if (cls == "nan_inf") {
      if (rng.chance(1.0 / 48)) {
        t.set_bits(i, special_bits(dt, int(rng.below(3))));
        continue;
      }
      v = rng.normal();
    } else {
      throw std::invalid_argument("unknown value class '" + cls + "'");
    }
    t.set_value_rn(i, float(v));
  }
}

}  // namespace

void fill_values(Case* c, const std::string& cls, uint64_t seed) {
  Prng rng(seed);
  fill_tensor(c->res, Role::res, cls, rng, c->dim);
  fill_tensor(c->gate, Role::gate, cls, rng, c->dim);
  fill_tensor(c->y, Role::y, cls, rng, c->dim);
  fill_tensor(c->grad_out, Role::grad_out, cls, rng, c->dim);
}

// ---- batch plans ------------------------------------------------------------------

namespace {

std::vector<int64_t> iota_rows(int64_t a, int64_t b) {
  std::vector<int64_t> v;
  for (int64_t r = a; r < b; ++r) v.push_back(r);
  return v;
}

void shuffle(std::vector<int64_t>& v, Prng& rng) {
  for (int64_t i = int64_t(v.size()) - 1; i > 0; --i) std::swap(v[size_t(i)], v[size_t(rng.below(i + 1))]);
}

// A shuffle that is not the identity (for >= 2 elements).
void derange(std::vector<int64_t>& v, Prng& rng) {
  if (v.size() < 2) return;
  const auto orig = v;
  shuffle(v, rng);
  if (v == orig) std::swap(v.front(), v.back());
}

// Contiguous sub-batches of `size` rows starting every `stride` rows.
void tile(BatchPlan& p, int64_t rows, int64_t size, int64_t stride) {
  for (int64_t s = 0; s < rows; s += stride) p.batches.push_back(iota_rows(s, std::min(rows, s + size)));
}

}  // namespace

BatchPlan make_plan(const std::string& kind, const Case& c, uint64_t seed, const GenLimits& l) {
  Prng rng(seed);
  BatchPlan p;
  p.kind = kind;
  const int64_t n = c.rows;
  if (n <= 0) return p;
  if (kind == "singletons") {
    std::vector<int64_t> rows = iota_rows(0, n);
    if (n > l.max_singletons) {  // a sample, always with the first and last row
      shuffle(rows, rng);
      rows.resize(size_t(std::max<int64_t>(l.max_singletons, 2)));
      rows[0] = 0;
      rows[1] = n - 1;
      std::sort(rows.begin(), rows.end());
      rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    }
    for (int64_t r : rows) p.batches.push_back({r});
  } else if (kind == "partition") {
    const int64_t k = rng.range(std::min<int64_t>(2, n), std::min<int64_t>(n, 16));
    const auto c2 = cuts(n, k, false, rng);
    for (size_t s = 0; s + 1 < c2.size(); ++s) p.batches.push_back(iota_rows(c2[s], c2[s + 1]));
  } else if (kind == "reversal" || kind == "permutation") {
    auto all = iota_rows(0, n);
    const int64_t m = n > 1 ? rng.range(1, n - 1) : 1;  // a proper subset, so sizes differ too
    const int64_t start = rng.range(0, n - m);
    auto part = iota_rows(start, start + m);
    if (kind == "reversal") {
      std::reverse(all.begin(), all.end());
      std::reverse(part.begin(), part.end());
    } else {
      derange(all, rng);
      derange(part, rng);
    }
    p.batches = {all, part};
  } else if (kind == "probe") {
    // prior art: a probe row at the front, middle and back of a random batch
    // of other rows, and once in the whole batch reversed
    const int64_t probe = rng.below(n);
    std::vector<int64_t> others;
    for (int64_t r = 0; r < n; ++r)
      if (r != probe) others.push_back(r);
    shuffle(others, rng);
    others.resize(size_t(rng.range(std::min<int64_t>(1, int64_t(others.size())), int64_t(others.size()))));
    for (int where = 0; where < 3; ++where) {
      auto b = others;
      const size_t at = where == 0 ? 0 : where == 1 ? b.size() / 2 : b.size();
      b.insert(b.begin() + long(at), probe);
      p.batches.push_back(b);
    }
    auto rev = iota_rows(0, n);
    std::reverse(rev.begin(), rev.end());
    p.batches.push_back(rev);
  } else if (kind == "thresholds") {
    // 2^k-1, 2^k, 2^k+1 rows, contiguous at a random start (a few k's)
    std::vector<int64_t> sizes;
    for (int64_t s = 2; s - 1 <= n; s *= 2)
      for (int64_t d : {-1, 0, 1})
        if (s + d >= 1 && s + d <= n && s + d != n) sizes.push_back(s + d);
    if (sizes.empty()) sizes.push_back(1);
    shuffle(sizes, rng);
    sizes.resize(std::min<size_t>(sizes.size(), 6));
    for (int64_t s : sizes) {
      const int64_t start = rng.range(0, n - s);
      p.batches.push_back(iota_rows(start, start + s));
    }
  } else if (kind == "prior_art") {
    // The report's sub-batch sizes 1, 7, 4097, 32768, 65536 of a 131072-row
    // batch. Sizes not below the rows are scaled by rows/131072; 1 and 7 are
    // sampled, one sub-batch every n/8 rows (the report: every 256 rows).
    for (int64_t s : {int64_t(1), int64_t(7), int64_t(4097), int64_t(32768), int64_t(65536)}) {
      int64_t size = s < n ? s : std::max<int64_t>(1, s * n / 131072);
      if (size >= n) size = std::max<int64_t>(1, n - 1);
      const int64_t stride = s <= 7 ? std::max<int64_t>(size, n / 8) : size;
      tile(p, n, size, stride);
    }
  } else if (kind == "repeat") {
    // one batch drawing rows with repetition (a row at several offsets), and
    // whole-case reruns for `repeatable`
    const int64_t m = rng.range(2, std::max<int64_t>(2, std::min<int64_t>(n + 2, 64)));
    std::vector<int64_t> b;
    for (int64_t i = 0; i < m; ++i) b.push_back(rng.below(n));
    b.push_back(b.front());  // at least one repeat
    p.batches.push_back(b);
    p.repeats = int(rng.range(1, 3));
  } else if (kind == "gate_groups") {
    // used gates split into random groups; each batch = the group's rows in row order
    const auto by_gate = rows_by_gate(c);
    std::vector<int64_t> used;
    for (size_t k = 0; k < by_gate.size(); ++k)
      if (!by_gate[k].empty()) used.push_back(int64_t(k));
    shuffle(used, rng);
    const int64_t groups = used.size() > 1 ? rng.range(2, std::min<int64_t>(int64_t(used.size()), 8)) : 1;
    std::vector<std::vector<int64_t>> g(static_cast<size_t>(groups));
    for (size_t i = 0; i < used.size(); ++i) g[i % size_t(groups)].push_back(used[i]);
    for (auto& grp : g) {
      std::vector<int64_t> b;
      for (int64_t k : grp) b.insert(b.end(), by_gate[size_t(k)].begin(), by_gate[size_t(k)].end());
      std::sort(b.begin(), b.end());
      if (!b.empty()) p.batches.push_back(b);
    }
  } else {
    throw std::invalid_argument("unknown plan kind '" + kind + "'");
  }
  return p;
}

BatchPlan default_plan(const Case& c) {
  // Halves, first/middle/last row alone, the whole batch reversed, and one
  // batch per half of the used gates (whole segments, for segment invariance).
  BatchPlan p;
  p.kind = "default";
  const int64_t n = c.rows;
  if (n <= 0) return p;
  if (n >= 2) {
    p.batches.push_back(iota_rows(0, n / 2));
    p.batches.push_back(iota_rows(n / 2, n));
  }
  for (int64_t r : {int64_t(0), n / 2, n - 1})
    if (p.batches.empty() || p.batches.back() != std::vector<int64_t>{r}) p.batches.push_back({r});
  auto rev = iota_rows(0, n);
  std::reverse(rev.begin(), rev.end());
  p.batches.push_back(rev);
  const auto by_gate = rows_by_gate(c);
  std::vector<int64_t> even, odd;
  int64_t used = 0;
  for (size_t k = 0; k < by_gate.size(); ++k) {
    if (by_gate[k].empty()) continue;
    auto& dst = (used++ % 2 == 0) ? even : odd;
    dst.insert(dst.end(), by_gate[k].begin(), by_gate[k].end());
  }
  for (auto* b : {&even, &odd})
    if (!b->empty() && int64_t(b->size()) < n) {
      std::sort(b->begin(), b->end());
      p.batches.push_back(*b);
    }
  return p;
}

// ---- cases --------------------------------------------------------------------------

Case make_case_from_spec(const CaseSpec& s, const GenLimits& limits) {
  Case c = make_case(s.dtype, s.rows, s.dim, s.gates);
  c.index = make_index(s.index_pattern, s.rows, s.gates, s.index_seed);
  fill_values(&c, s.value_class, s.value_seed);
  c.index_pattern = s.index_pattern;
  c.value_class = s.value_class;
  c.plan = make_plan(s.plan_kind, c, s.plan_seed, limits);
  return c;
}

rc::Gen<CaseSpec> gen_case_spec(const GenLimits& l) {
  if (l.dtypes.empty() || l.index_patterns.empty() || l.value_classes.empty() || l.plan_kinds.empty())
    throw std::invalid_argument("GenLimits: dtypes, index_patterns, value_classes and plan_kinds must be non-empty");
  using namespace rc;
  return gen::mapcat(gen_rows(l), [l](int64_t rows) {
    return gen::mapcat(gen::elementOf(l.index_patterns), [l, rows](const std::string& pattern) {
      const int64_t min_gates = rows > 0 ? 1 : 0;
      auto gates = rows > 0 ? gen_gates(l, rows, pattern)
                            : gen::inRange<int64_t>(min_gates, std::min<int64_t>(l.max_gates, 9) + 1);
      return gen::build<CaseSpec>(gen::set(&CaseSpec::rows, gen::just(rows)),
                                  gen::set(&CaseSpec::index_pattern, gen::just(pattern)),
                                  gen::set(&CaseSpec::dtype, gen::elementOf(l.dtypes)),
                                  gen::set(&CaseSpec::dim, gen_dim(l, rows)),
                                  gen::set(&CaseSpec::gates, gates),
                                  gen::set(&CaseSpec::value_class, gen::elementOf(l.value_classes)),
                                  gen::set(&CaseSpec::plan_kind, gen::elementOf(l.plan_kinds)),
                                  gen::set(&CaseSpec::index_seed, gen::noShrink(gen::arbitrary<uint64_t>())),
                                  gen::set(&CaseSpec::value_seed, gen::noShrink(gen::arbitrary<uint64_t>())),
                                  gen::set(&CaseSpec::plan_seed, gen::noShrink(gen::arbitrary<uint64_t>())));
    });
  });
}

// ---- case-level shrinks -----------------------------------------------------------

namespace {

// Rows [a, b) of c, with the plan restricted and renumbered.
Case keep_rows(const Case& c, int64_t a, int64_t b) {
  Case s = sub_case(c, iota_rows(a, b));
  if (c.plan) {
    BatchPlan p = *c.plan;
    p.batches.clear();
    for (const auto& batch : c.plan->batches) {
      std::vector<int64_t> nb;
      for (int64_t r : batch)
        if (r >= a && r < b) nb.push_back(r - a);
      if (!nb.empty()) p.batches.push_back(nb);
    }
    s.plan = p;
  }
  return s;
}

// Columns [0, d) of c.
Case keep_cols(const Case& c, int64_t d) {
  Case s = make_case(c.dtype, c.rows, d, c.gates);
  s.index = c.index;
  s.plan = c.plan;
  s.index_pattern = c.index_pattern;
  s.value_class = c.value_class;
  auto cut = [&](HostTensor& dst, const HostTensor& src) {
    for (int64_t r = 0; r < src.rows; ++r)
      for (int64_t j = 0; j < d; ++j) dst.set_bits(r * d + j, src.bits(r * c.dim + j));
  };
  cut(s.res, c.res);
  cut(s.gate, c.gate);
  cut(s.y, c.y);
  cut(s.grad_out, c.grad_out);
  return s;
}

// Moves every value of one tensor one step down the ladder
//   any value -> integer in [-8, 8] -> 0 or 1 -> +0
// (how = 2, 1, 0; non-finite values go straight to +0). Each step only
// changes values that are above its rung, so shrinking cannot cycle.
// Returns false if nothing would change.
bool simplify_tensor(HostTensor& t, int how) {
  bool changed = false;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const float v = t.value(i);
    float w = v;
    if (!std::isfinite(v) || how == 0) w = 0.0f;
    else if (how == 1) w = v == 0 ? 0.0f : 1.0f;
    else w = std::round(std::max(-8.0f, std::min(8.0f, v)));
    if (w == 0) w = 0.0f;  // +0 is simpler than -0
    const uint32_t b = float_to_bits_rn(t.dtype, w);
    if (b != t.bits(i)) {
      t.set_bits(i, b);
      changed = true;
    }
  }
  return changed;
}

}  // namespace

std::vector<Case> simpler_cases(const Case& c) {
  std::vector<Case> out;
  if (c.rows > 1) {
    out.push_back(keep_rows(c, 0, c.rows / 2));
    out.push_back(keep_rows(c, c.rows / 2, c.rows));
    if (c.rows <= 16)
      for (int64_t r = 0; r < c.rows; ++r) {
        std::vector<int64_t> keep;
        for (int64_t q = 0; q < c.rows; ++q)
          if (q != r) keep.push_back(q);
        // drop row r: rows after it move up by one
        Case d = sub_case(c, keep);
        if (c.plan) {
          BatchPlan p = *c.plan;
          p.batches.clear();
          for (const auto& b : c.plan->batches) {
            std::vector<int64_t> nb;
            for (int64_t q : b)
              if (q != r) nb.push_back(q > r ? q - 1 : q);
            if (!nb.empty()) p.batches.push_back(nb);
          }
          d.plan = p;
        }
        out.push_back(d);
      }
  }
  if (c.dim > 1) out.push_back(keep_cols(c, c.dim / 2));
  if (c.plan && c.plan->batches.size() > 1)
    for (size_t i = 0; i < c.plan->batches.size() && i < 8; ++i) {
      Case s = c;
      s.plan->batches = {c.plan->batches[i]};
      out.push_back(s);
    }
  for (int how = 0; how < 3; ++how)
    for (HostTensor Case::*t : {&Case::y, &Case::grad_out, &Case::res, &Case::gate}) {
      Case s = c;
      if (simplify_tensor(s.*t, how)) out.push_back(std::move(s));
    }
  return out;
}

rc::Gen<Case> gen_case(const GenLimits& l) {
  const auto spec = gen_case_spec(l);
  return rc::Gen<Case>([spec, l](const rc::Random& random, int size) {
    auto built = rc::shrinkable::map(spec(random, size),
                                     [l](const CaseSpec& s) { return make_case_from_spec(s, l); });
    return rc::shrinkable::postShrink(
        built, [](const Case& c) { return rc::seq::fromContainer(simpler_cases(c)); });
  });
}

bool plan_moves_rows(const std::string& property, const Case& c) {
  const BatchPlan p = c.plan ? *c.plan : default_plan(c);
  if (property == "row_invariance") return row_movement(c, p).ok();
  if (property == "segment_invariance") return segment_movement(c, p).ok();
  return true;
}

rc::Gen<Case> gen_case_for(const std::string& property, const GenLimits& l) {
  auto g = gen_case(limits_for_property(property, l));
  if (property != "row_invariance" && property != "segment_invariance") return g;
  return rc::gen::suchThat(g, [property](const Case& c) { return plan_moves_rows(property, c); });
}

std::vector<std::string> size_classes(const Case& c) {
  auto cls = [](const char* what, int64_t n) {
    const char* r = n == 0 ? "0" : n < 10 ? "1-9" : n < 100 ? "10-99" : n < 1000 ? "100-999" : "1000+";
    return std::string(what) + " " + r;
  };
  return {cls("rows", c.rows), cls("dim", c.dim), cls("gates", c.gates)};
}

}  // namespace gatecheck
