#include "generators.h"

#include "../catalog/property_catalog.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include <rapidcheck/GenerationFailure.h>

#include "../../case/plan_movement.h"
#include "cached_map.h"

namespace gatecheck {

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
  // The models' widths, then awkward ones past a tile's or a block's width:
  // odd (3071, 3073), one past a power of two (4097, 8193, 16385), primes
  // (4093, 4099, 5381, 6143, 8191, 12289, 16381), and 16384.
  static const std::vector<int64_t> v = {3072, 5376, 8192, 3071, 3073,  4093,  4097,  4099,
                                         5381, 6143, 8191, 8193, 12289, 16381, 16384, 16385};
  return v;
}
const std::vector<int64_t>& gates() {
  static const std::vector<int64_t> v = {1, 2, 3, 9};
  return v;
}
}  // namespace edges

GenLimits limits_for_property(const std::string& property, const GenLimits& base) {
  GenLimits l = base;
  const PlanNeed need = property_info(property).plans;
  if (need != PlanNeed::none) {
    l.min_rows = std::max<int64_t>(l.min_rows, 2);
    l.min_dim = std::max<int64_t>(l.min_dim, 1);
    l.max_rows = std::max(l.max_rows, l.min_rows);
    l.max_dim = std::max(l.max_dim, l.min_dim);
  }
  if (need == PlanNeed::split) l.plan_kinds = split_plan_kinds();  // only splits
  if (need == PlanNeed::segments_move) {
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
  const auto big = within(edges::big_dims(), l.min_dim, l.big_dim_max);
  const bool big_ok = l.big_dims && rows <= l.big_dim_max_rows && !big.empty();
  const int64_t lo = std::max<int64_t>(l.min_dim, 1), hi = std::max(lo, l.max_dim);
  // odd sizes: no vector width divides them
  auto odd = rc::gen::map(rc::gen::inRange<int64_t>(0, (hi - lo) / 2 + 1), [lo, hi](int64_t k) {
    const int64_t v = (lo | 1) + 2 * k;
    return v > hi ? hi : v;
  });
  auto small = weighted({{l.min_dim == 0 ? 1 : 0, rc::gen::just(int64_t(0))},  // empty problem
                          {e.empty() ? 0 : 6, e.empty() ? rc::gen::just(int64_t(lo)) : rc::gen::elementOf(e)},
                          {2, odd},
                          {2, rc::gen::inRange<int64_t>(lo, hi + 1)}});
  if (!big_ok) return small;
  // A wide dim for kWideDimPercent of the cases with few rows, at every
  // RapidCheck size: a pick that followed the size (as inRange and elementOf
  // do) would reach the wide dims, and the later ones of the list, only late
  // in a run. The pick shrinks towards a small dim.
  const auto at_full_size = [](rc::Gen<int64_t> g) {
    return rc::Gen<int64_t>([g](const rc::Random& r, int) { return g(r, rc::kNominalSize); });
  };
  auto wide = at_full_size(rc::gen::elementOf(big));
  return rc::gen::mapcat(at_full_size(rc::gen::inRange<int64_t>(0, 100)), [small, wide](int64_t pick) {
    return pick < 100 - kWideDimPercent ? small : wide;
  });
}

rc::Gen<int64_t> gen_gates(const GenLimits& l, int64_t rows, const std::string& pattern) {
  const int64_t cap = std::max<int64_t>(l.max_gates, 1);
  // unused_gates needs a gate to leave unused; segment patterns read best with a few.
  const int64_t lo = std::max<int64_t>(pattern == "unused_gates" ? std::min<int64_t>(2, cap) : 1, std::min(l.min_gates, cap));
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

// ---- cases --------------------------------------------------------------------------

rc::Gen<CaseSpec> gen_case_spec(const GenLimits& l) {
  if (l.dtypes.empty() || l.index_patterns.empty() || l.value_classes.empty() || l.plan_kinds.empty())
    throw std::invalid_argument("GenLimits: dtypes, index_patterns, value_classes and plan_kinds must be non-empty");
  using namespace rc;
  return gen::mapcat(gen_rows(l), [l](int64_t rows) {
    return gen::mapcat(gen::elementOf(l.index_patterns), [l, rows](const std::string& pattern) {
      const int64_t empty_lo = std::min(l.min_gates, l.max_gates);  // no rows: any gate count from min_gates (0 by default)
      const int64_t empty_hi = std::max(empty_lo, std::min<int64_t>(l.max_gates, 9));
      auto gates = rows > 0 ? gen_gates(l, rows, pattern) : gen::inRange<int64_t>(empty_lo, empty_hi + 1);
      // The op is set after the build: another member to build would take
      // its own split of the random source and redraw every case.
      const OpSchema* op = l.op;
      return gen::map(gen::build<CaseSpec>(gen::set(&CaseSpec::rows, gen::just(rows)),
                                  gen::set(&CaseSpec::index_pattern, gen::just(pattern)),
                                  gen::set(&CaseSpec::dtype, gen::elementOf(l.dtypes)),
                                  gen::set(&CaseSpec::dim, gen_dim(l, rows)),
                                  gen::set(&CaseSpec::gates, gates),
                                  gen::set(&CaseSpec::value_class, gen::elementOf(l.value_classes)),
                                  gen::set(&CaseSpec::plan_kind, gen::elementOf(l.plan_kinds)),
                                  gen::set(&CaseSpec::index_seed, gen::noShrink(gen::arbitrary<uint64_t>())),
                                  gen::set(&CaseSpec::value_seed, gen::noShrink(gen::arbitrary<uint64_t>())),
                                  gen::set(&CaseSpec::plan_seed, gen::noShrink(gen::arbitrary<uint64_t>()))),
                      [op](CaseSpec s) {
                        s.op = op;
                        return s;
                      });
    });
  });
}

rc::Gen<Case> gen_case(const GenLimits& l) {
  const auto spec = gen_case_spec(l);
  return rc::Gen<Case>([spec, l](const rc::Random& random, int size) {
    auto built = cached_map(spec(random, size),
                            [l](const CaseSpec& s) { return make_case_from_spec(s, l.max_singletons); });
    return rc::shrinkable::postShrink(
        built, [](const Case& c) { return rc::seq::fromContainer(simpler_cases(c)); });
  });
}

bool plan_moves_rows(const std::string& property, const Case& c) {
  const BatchPlan p = c.plan ? *c.plan : default_plan(c);
  switch (property_info(property).plans) {
    case PlanNeed::rows_move: return row_movement(c, p).ok();
    case PlanNeed::segments_move: return segment_movement(c, p).ok();
    case PlanNeed::split: {  // the split split_invariance uses (its own default without one)
      int64_t parts = 0;
      for (const auto& b : (c.plan && is_split_kind(c.plan->kind) ? *c.plan : default_split(c)).batches)
        parts += !b.empty();
      return parts >= 2 && c.dim > 0;
    }
    case PlanNeed::none: break;
  }
  return true;
}

Case case_skeleton(const CaseSpec& s, int64_t max_singletons) {
  Case c;
  c.op = s.op;
  c.dtype = s.dtype;
  c.rows = s.rows;
  c.dim = s.dim;
  c.gates = s.gates;
  c.index = make_index(s.index_pattern, s.rows, s.gates, s.index_seed);
  c.plan = make_plan(s.plan_kind, c, s.plan_seed, max_singletons);
  return c;
}

rc::Gen<Case> gen_case_for(const std::string& property, const GenLimits& l0) {
  const GenLimits l = limits_for_property(property, l0);
  auto g = gen_case(l);
  if (property_info(property).plans == PlanNeed::none) return g;
  // rc::gen::suchThat(g, moves), draw for draw (its loop: 100 tries, each on
  // the next split and one size larger), but a candidate is first judged on
  // its skeleton: its tensors are filled only if its plan moves rows (a
  // rejected candidate cost a whole materialisation). The full case is
  // judged again, as suchThat would.
  const auto spec = gen_case_spec(l);
  return rc::Gen<Case>([g, spec, l, property](const rc::Random& random, int size) {
    const auto moves = [property](const Case& c) { return plan_moves_rows(property, c); };
    rc::Random r(random);
    int current = size;
    for (int tries = 0; tries < 100; ++tries, ++current) {
      const rc::Random draw = r.split();
      if (!moves(case_skeleton(spec(draw, current).value(), l.max_singletons))) continue;
      if (auto s = rc::shrinkable::filter(g(draw, current), moves)) return std::move(*s);
    }
    throw rc::GenerationFailure("Gave up trying to generate value satisfying predicate.");
  });
}

std::vector<std::string> size_classes(const Case& c) {
  auto cls = [](const char* what, int64_t n) {
    const char* r = n == 0 ? "0" : n < 10 ? "1-9" : n < 100 ? "10-99" : n < 1000 ? "100-999" : "1000+";
    return std::string(what) + " " + r;
  };
  // dim splits 1000+ at 4,096, a tile's or a block's width: past it is what
  // wide rows are drawn for.
  std::string dim = cls("dim", c.dim);
  if (c.dim >= 1000) dim = c.dim > kWideDimEdge ? "dim 4097+" : "dim 1000-4096";
  return {cls("rows", c.rows), dim, cls("gates", c.gates)};
}

}  // namespace gatecheck
