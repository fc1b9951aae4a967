#include "case_decoder.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace gatecheck::fuzz {

const char* index_pattern_name(IndexPattern p) {
  static const char* names[] = {"sorted_equal", "sorted_random", "single",       "identity",  "uniform",
                                "reversed",     "giant_tiny",    "unused_gates", "h3_shared", "max_heavy"};
  return p < IndexPattern::count ? names[int(p)] : "?";
}
const char* value_class_name(ValueClass v) {
  static const char* names[] = {"normal",        "small_int",   "mixed",    "order_sensitive", "subnormal",
                                "near_overflow", "signed_zero", "specials", "raw_bits"};
  return v < ValueClass::count ? names[int(v)] : "?";
}
const char* plan_kind_name(PlanKind k) {
  static const char* names[] = {"none",    "partition",   "singletons", "prior_art", "thresholds",
                                "probe",   "permutation", "reversal",   "repeat"};
  return k < PlanKind::count ? names[int(k)] : "?";
}

int shape_class(int64_t rows, int64_t dim) {
  // rows: 0, 1, 2-3, 4-9, 10-17, 18-33, 34-65, more; dim: 0, 1-8, 9-16, 17-32, more.
  static const int64_t row_edges[] = {0, 1, 3, 9, 17, 33, 65};
  static const int64_t dim_edges[] = {0, 8, 16, 32};
  int rb = 0, db = 0;
  while (rb < 7 && rows > row_edges[rb]) ++rb;
  while (db < 4 && dim > dim_edges[db]) ++db;
  return rb * 5 + db;
}

std::string shape_class_name(int k) {
  static const char* rows[] = {"0", "1", "2-3", "4-9", "10-17", "18-33", "34-65", "66+"};
  static const char* dims[] = {"0", "1-8", "9-16", "17-32", "33+"};
  if (k < 0 || k >= kShapeClasses) return "?";
  return std::string("rows") + rows[k / 5] + " dim" + dims[k % 5];
}

namespace {

// splitmix64: our own generator so a seed means the same values everywhere.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  int64_t below(int64_t n) { return n <= 1 ? 0 : int64_t(next() % uint64_t(n)); }
  float unit() { return float(next() >> 40) * (1.0f / 16777216.0f); }  // [0,1), exact
  // Irwin-Hall(12) - 6: close to N(0,1), pure arithmetic, so bitwise deterministic.
  float normal() {
    float s = 0;
    for (int i = 0; i < 12; ++i) s += unit();
    return s - 6.0f;
  }
  bool chance(int percent) { return below(100) < percent; }
};

// Edge lists, as in CUB's boundary tests: around powers of two and tiny sizes.
const int64_t kRowEdges[] = {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65};
const int64_t kDimEdges[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 31, 32, 33};
const int64_t kTileRows[] = {255, 256, 257, 259};

int64_t pick_rows(FuzzedDataProvider& fdp, const DecodeLimits& lim) {
  const int how = fdp.ConsumeIntegralInRange<int>(0, 15);
  if (how == 15 && lim.tile_rows > 0) {
    const int64_t r = kTileRows[fdp.ConsumeIntegralInRange<int>(0, 3)];
    return std::min(r, lim.tile_rows);
  }
  if (how >= 10) return fdp.ConsumeIntegralInRange<int64_t>(0, lim.max_rows);
  const int64_t r = kRowEdges[fdp.ConsumeIntegralInRange<int>(0, int(std::size(kRowEdges)) - 1)];
  return std::min(r, lim.max_rows);
}

int64_t pick_dim(FuzzedDataProvider& fdp, const DecodeLimits& lim, int64_t rows) {
  // Large-row cases keep dim small so an execution stays cheap.
  const int64_t max_dim = rows > lim.max_rows ? std::min<int64_t>(lim.max_dim, 4) : lim.max_dim;
  const int how = fdp.ConsumeIntegralInRange<int>(0, 15);
  if (how == 15) return 0;  // dim = 0: a valid empty problem
  if (how >= 10) return fdp.ConsumeIntegralInRange<int64_t>(1, std::max<int64_t>(1, max_dim));
  const int64_t d = kDimEdges[fdp.ConsumeIntegralInRange<int>(0, int(std::size(kDimEdges)) - 1)];
  return std::min(d, std::max<int64_t>(1, max_dim));
}

// gates for patterns that do not fix it: 1, 2, 3, 9, about rows, or more than rows.
int64_t pick_gates(FuzzedDataProvider& fdp, const DecodeLimits& lim, int64_t rows) {
  int64_t g = 1;
  switch (fdp.ConsumeIntegralInRange<int>(0, 5)) {
    case 0: g = 1; break;
    case 1: g = 2; break;
    case 2: g = 3; break;
    case 3: g = 9; break;
    case 4: g = std::max<int64_t>(1, rows); break;
    default: g = rows + fdp.ConsumeIntegralInRange<int64_t>(1, 5); break;
  }
  return std::clamp<int64_t>(g, 1, lim.max_gates);
}

// Sorted segments of equal length over g gates.
void sorted_equal(std::vector<int64_t>& idx, int64_t g) {
  const int64_t n = int64_t(idx.size());
  const int64_t len = std::max<int64_t>(1, (n + g - 1) / g);
  for (int64_t r = 0; r < n; ++r) idx[size_t(r)] = std::min(r / len, g - 1);
}

void make_index(Case& c, IndexPattern p, FuzzedDataProvider& fdp, const DecodeLimits& lim, Rng& rng) {
  const int64_t rows = c.rows;
  auto& idx = c.index;
  switch (p) {
    case IndexPattern::sorted_equal:
      c.gates = pick_gates(fdp, lim, rows);
      sorted_equal(idx, c.gates);
      break;
    case IndexPattern::sorted_random: {
      c.gates = pick_gates(fdp, lim, rows);
      for (auto& v : idx) v = rng.below(c.gates);
      std::sort(idx.begin(), idx.end());
      break;
    }
    case IndexPattern::single: {
      c.gates = pick_gates(fdp, lim, rows);
      const int64_t k = rng.below(c.gates);
      std::fill(idx.begin(), idx.end(), k);
      break;
    }
    case IndexPattern::identity:
      c.gates = std::clamp<int64_t>(rows, 1, lim.max_gates);
      for (int64_t r = 0; r < rows; ++r) idx[size_t(r)] = r % c.gates;
      break;
    case IndexPattern::uniform:
      c.gates = pick_gates(fdp, lim, rows);
      for (auto& v : idx) v = rng.below(c.gates);
      break;
    case IndexPattern::reversed:
      c.gates = pick_gates(fdp, lim, rows);
      sorted_equal(idx, c.gates);
      for (auto& v : idx) v = c.gates - 1 - v;
      break;
    case IndexPattern::giant_tiny: {
      // One giant segment (gate 0), then tiny segments of one or two rows.
      c.gates = std::clamp<int64_t>(rows / 2 + 2, 1, lim.max_gates);
      const int64_t giant = rows - rows / 4;
      int64_t g = 1;
      for (int64_t r = 0; r < rows; ++r) {
        if (r < giant || c.gates == 1) { idx[size_t(r)] = 0; continue; }
        idx[size_t(r)] = g;
        if (rng.chance(60)) g = std::min(g + 1, c.gates - 1);
      }
      break;
    }
    case IndexPattern::unused_gates: {
      // More gates than rows, and only the even ones used.
      c.gates = std::clamp<int64_t>(rows + 1 + fdp.ConsumeIntegralInRange<int64_t>(0, 8), 2, lim.max_gates);
      for (auto& v : idx) v = 2 * rng.below((c.gates + 1) / 2);
      break;
    }
    case IndexPattern::h3_shared: {
      // One index of length S shared by every sequence: row r uses shared[r % S].
      c.gates = pick_gates(fdp, lim, rows);
      std::vector<int64_t> divisors;
      for (int64_t s = 1; s <= rows; ++s)
        if (rows % s == 0) divisors.push_back(s);
      if (divisors.empty()) break;  // rows == 0
      const int64_t S = divisors[size_t(fdp.ConsumeIntegralInRange<size_t>(0, divisors.size() - 1))];
      std::vector<int64_t> shared(static_cast<size_t>(S));
      for (auto& v : shared) v = rng.below(c.gates);
      std::sort(shared.begin(), shared.end());
      std::vector<int64_t> expanded;
      if (expand_shared_index(shared, rows, &expanded).ok()) idx = expanded;
      break;
    }
    case IndexPattern::max_heavy:
      c.gates = pick_gates(fdp, lim, rows);
      for (auto& v : idx) v = rng.chance(80) ? c.gates - 1 : rng.below(c.gates);
      break;
    case IndexPattern::count:
      break;
  }
}

float dtype_max(DType t) {
  return t == DType::f16 ? 65504.0f : std::numeric_limits<float>::max();  // bf16 max rounds like fp32's top
}
uint32_t exponent_field_zero_random(DType t, Rng& rng) {  // a random subnormal (or zero), random sign
  switch (t) {
    case DType::f32: return uint32_t(rng.next() & 0x807fffffu);
    case DType::f16: return uint32_t(rng.next() & 0x83ffu);
    default: return uint32_t(rng.next() & 0x807fu);
  }
}
uint32_t raw_bits(DType t, Rng& rng) { return t == DType::f32 ? uint32_t(rng.next()) : uint32_t(rng.next() & 0xffff); }

// One value of class v for tensor role `role` (0 res, 1 gate, 2 y, 3 grad_out) at row r.
uint32_t make_value(DType t, ValueClass v, int role, int64_t r, Rng& rng, float gate_scale) {
  auto rn = [&](float x) { return float_to_bits_rn(t, x); };
  const float scale = role == 1 ? gate_scale : 1.0f;
  switch (v) {
    case ValueClass::normal: return rn(rng.normal() * scale);
    case ValueClass::small_int: return rn(float(rng.below(9) - 4));
    case ValueClass::mixed: {
      const float m = std::ldexp(1.0f, int(rng.below(41)) - 20);
      return rn((rng.chance(50) ? -m : m) * (1.0f + rng.unit()));
    }
    case ValueClass::order_sensitive: {
      // Large cancelling terms in g*y mixed with small ones: any change of
      // summation order shows after rounding.
      if (role == 2) return rn((r % 3 == 2) ? 0.001f * (1.0f + rng.unit()) : ((r & 1) ? -4096.0f : 4096.0f));
      if (role == 3) return rn(1.0f + float(rng.below(3)));
      return rn(rng.normal() * scale);
    }
    case ValueClass::subnormal:
      return rng.chance(70) ? exponent_field_zero_random(t, rng) : rn(rng.normal() * scale);
    case ValueClass::near_overflow: {
      const float big = dtype_max(t) * (0.5f + 0.5f * rng.unit());
      if (role == 1) return rn(rng.chance(50) ? 2.0f : 1.0f + rng.unit());
      return rn(rng.chance(50) ? -big : big);
    }
    case ValueClass::signed_zero: {
      const int k = int(rng.below(4));
      return k == 0 ? rn(0.0f) : k == 1 ? rn(-0.0f) : rn(k == 2 ? 1.0f : -1.0f);
    }
    case ValueClass::specials: {
      const int64_t k = rng.below(100);
      if (k < 3) return rn(std::numeric_limits<float>::quiet_NaN());
      if (k < 6) return rn(std::numeric_limits<float>::infinity());
      if (k < 9) return rn(-std::numeric_limits<float>::infinity());
      return rn(rng.normal() * scale);
    }
    case ValueClass::raw_bits: return raw_bits(t, rng);
    case ValueClass::count: break;
  }
  return 0;
}

void fill_values(Case& c, ValueClass v, Rng& rng) {
  const float gate_scale = std::ldexp(1.0f, int(rng.below(8)) - 4);  // 1/16 .. 8
  HostTensor* tensors[] = {&c.res, &c.gate, &c.y, &c.grad_out};
  for (int role = 0; role < 4; ++role) {
    HostTensor& t = *tensors[role];
    for (int64_t i = 0; i < t.numel(); ++i)
      t.set_bits(i, make_value(c.dtype, v, role, t.cols ? i / t.cols : 0, rng, gate_scale));
  }
}

std::vector<int64_t> iota_rows(int64_t from, int64_t to) {
  std::vector<int64_t> v;
  for (int64_t r = from; r < to; ++r) v.push_back(r);
  return v;
}

void shuffle(std::vector<int64_t>& v, Rng& rng) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[size_t(rng.below(int64_t(i)))]);
}

// Prefix batches of the given sizes, each clipped to [1, rows].
void prefix_batches(BatchPlan& p, int64_t rows, const std::vector<int64_t>& sizes) {
  for (int64_t s : sizes) {
    s = std::clamp<int64_t>(s, 1, rows);
    p.batches.push_back(iota_rows(0, s));
  }
}

std::optional<BatchPlan> make_plan(PlanKind k, int64_t rows, Rng& rng) {
  if (k == PlanKind::none || rows == 0) return std::nullopt;
  BatchPlan p;
  p.kind = plan_kind_name(k);
  switch (k) {
    case PlanKind::partition: {
      int64_t r = 0;
      while (r < rows) {
        const int64_t len = 1 + rng.below(std::max<int64_t>(1, rows - r));
        p.batches.push_back(iota_rows(r, r + len));
        r += len;
      }
      break;
    }
    case PlanKind::singletons:
      for (int64_t r = 0; r < rows; ++r) p.batches.push_back({r});
      break;
    case PlanKind::prior_art:
      // The prior art's sub-batch sizes 1, 7, 4097, 32768, 65536 of 131072,
      // scaled down to this batch.
      prefix_batches(p, rows, {1, 7, rows * 4097 / 131072 + 1, rows / 4 + 1, rows / 2 + 1});
      break;
    case PlanKind::thresholds: {
      std::vector<int64_t> sizes;
      for (int64_t b = 1; b <= rows; b *= 2) {
        if (rng.chance(50)) continue;
        sizes.insert(sizes.end(), {b - 1, b, b + 1});
      }
      if (sizes.empty()) sizes = {1, rows};
      prefix_batches(p, rows, sizes);
      break;
    }
    case PlanKind::probe: {
      // A probe row at the front, middle and back of a batch of other rows.
      const int64_t probe = rng.below(rows);
      std::vector<int64_t> others;
      for (int64_t r = 0; r < rows; ++r)
        if (r != probe && rng.chance(70)) others.push_back(r);
      shuffle(others, rng);
      auto front = others, back = others, mid = others;
      front.insert(front.begin(), probe);
      back.push_back(probe);
      mid.insert(mid.begin() + std::ptrdiff_t(mid.size() / 2), probe);
      p.batches = {front, mid, back, {probe}};
      break;
    }
    case PlanKind::permutation: {
      auto all = iota_rows(0, rows);
      shuffle(all, rng);
      p.batches.push_back(all);
      break;
    }
    case PlanKind::reversal: {
      auto all = iota_rows(0, rows);
      std::reverse(all.begin(), all.end());
      p.batches.push_back(all);
      break;
    }
    case PlanKind::repeat:
      p.repeats = 1 + int(rng.below(3));
      p.batches.push_back(iota_rows(0, rows));
      break;
    default:
      return std::nullopt;
  }
  return p;
}

// A patch: one element of one tensor (or one index entry) set to exact bits.
void apply_patch(Case& c, FuzzedDataProvider& fdp) {
  const int which = fdp.ConsumeIntegralInRange<int>(0, 4);
  const uint32_t bits = fdp.ConsumeIntegral<uint32_t>();
  const uint32_t mask = c.dtype == DType::f32 ? 0xffffffffu : 0xffffu;
  if (which == 4) {
    if (c.rows == 0) return;
    const auto r = fdp.ConsumeIntegralInRange<int64_t>(0, c.rows - 1);
    c.index[size_t(r)] = int64_t(bits % uint64_t(c.gates));
    return;
  }
  HostTensor* tensors[] = {&c.res, &c.gate, &c.y, &c.grad_out};
  HostTensor& t = *tensors[which];
  if (t.numel() == 0) return;
  t.set_bits(fdp.ConsumeIntegralInRange<int64_t>(0, t.numel() - 1), bits & mask);
}

}  // namespace

Case decode_case(const uint8_t* data, size_t size, const DecodeLimits& lim, DecodeInfo* info) {
  FuzzedDataProvider fdp(data, size);
  static const DType kDtypes[] = {DType::bf16, DType::f16, DType::f32};
  const DType t = kDtypes[fdp.ConsumeIntegralInRange<int>(0, 2)];
  const int64_t rows = pick_rows(fdp, lim);
  const int64_t dim = pick_dim(fdp, lim, rows);
  const auto pattern = IndexPattern(fdp.ConsumeIntegralInRange<int>(0, int(IndexPattern::count) - 1));
  const auto values = ValueClass(fdp.ConsumeIntegralInRange<int>(0, int(ValueClass::count) - 1));
  const auto plan = PlanKind(fdp.ConsumeIntegralInRange<int>(0, int(PlanKind::count) - 1));
  Rng rng{fdp.ConsumeIntegral<uint64_t>()};

  Case c = make_case(t, rows, dim, 1);
  make_index(c, pattern, fdp, lim, rng);
  c.gate = HostTensor(t, c.gates, dim);
  c.index_pattern = index_pattern_name(pattern);
  c.value_class = value_class_name(values);
  fill_values(c, values, rng);
  c.plan = make_plan(plan, rows, rng);

  const int patches = fdp.ConsumeIntegralInRange<int>(0, 8);
  for (int i = 0; i < patches && fdp.remaining_bytes() > 0; ++i) apply_patch(c, fdp);

  if (info) *info = {pattern, values, c.plan ? plan : PlanKind::none, shape_class(rows, dim), patches};
  return c;
}

}  // namespace gatecheck::fuzz
