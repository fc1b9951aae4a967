#include "scale_tier.h"

#include "../catalog/property_catalog.h"

#include <algorithm>
#include <cmath>

#include "../../case/case_spec.h"
#include "../../case/fnv1a.h"
#include "../../case/prng.h"
#include "../../harness/scale/scale_backend.h"
#include "../../oracles/op_oracles.h"
#include "../generate/generators.h"

namespace gatecheck {

namespace {

constexpr int64_t kGridLimit = 65535;                  // blocks in a grid's y or z
constexpr int64_t kThreadsEdge = 65535 * 256;          // elements, one a thread in 256-thread blocks
constexpr int64_t kInt32Edge = (int64_t(1) << 31) - 1;  // int32 offsets, thread ids
constexpr int64_t kCpuMaxElements = int64_t(1) << 22;   // rows past 65,536 at small dims, cheaply
constexpr int64_t kCpuWideElements = int64_t(1) << 20;  // wide rows on the CPU: up to 64 of 16,385 columns

template <class T>
T pick(Prng& rng, const std::vector<T>& v) {
  return v[size_t(rng.below(int64_t(v.size())))];
}

// Weighted choice: index i with weight w[i].
size_t pick_weighted(Prng& rng, const std::vector<int>& w) {
  int total = 0;
  for (int x : w) total += x;
  int r = int(rng.below(total));
  for (size_t i = 0; i < w.size(); ++i) {
    if (r < w[i]) return i;
    r -= w[i];
  }
  return w.size() - 1;
}

const std::vector<int64_t>& grid_rows() {
  static const std::vector<int64_t> v = {65535, 65536, 65537, 65535, 65536, 65537, 131072, 262144, 4097, 8192, 32768};
  return v;
}
const std::vector<int64_t>& small_dims() {
  static const std::vector<int64_t> v = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17};
  return v;
}
const std::vector<int64_t>& gpu_row_dims() {  // below, at and past vector and warp widths
  static const std::vector<int64_t> v = {1, 3, 8, 9, 31, 33, 127, 128, 129, 257, 1000};
  return v;
}
const std::vector<int64_t>& model_dims() {  // the models' widths and awkward ones past a block's width
  static const std::vector<int64_t> v = {3072, 5376, 8192, 3071, 3073, 4093, 4097, 4099, 5381,
                                         6143, 8191, 8193, 12289, 16381, 16384, 16385};
  return v;
}
const std::vector<int64_t>& cpu_wide_rows() {  // a few rows of a wide dim, and one past a warp and a 64-row tile
  static const std::vector<int64_t> v = {2, 3, 7, 8, 9, 17, 33, 64, 65, 127};
  return v;
}
const std::vector<int64_t>& segment_rows() {  // a few 256-row tiles up to 65,536 rows
  static const std::vector<int64_t> v = {257, 513, 1025, 4097, 8192, 16384, 16385, 32768, 65536};
  return v;
}

enum Rung { kGridRung, kThreadsRung, kModelRung, kSegmentRung, kManyGatesRung, kPast2To31Rung, kPatternRung };
const char* rung_name(int r) {
  static const char* n[] = {"rows at the grid limit", "elements at 65,535 x 256", "model dims",
                            "long segment", "many gates", "past 2^31 elements", "any pattern at scale"};
  return n[r];
}

int64_t gates_for(Prng& rng, const std::string& pattern, int64_t rows) {
  static const std::vector<int64_t> few = {1, 2, 3, 9, 9, 64, 256};
  int64_t g = pick(rng, few);
  if (pattern == "unused_gates" || pattern == "long_segment") g = std::max<int64_t>(g, 2);
  return std::max<int64_t>(1, std::min(g, std::max<int64_t>(rows, 1)));
}

// (Exact values only where the op's oracle knows every output of them bit
// for bit; the draw is made either way, so that the stream stays the same.)
ScaleValues values_for(Prng& rng, const PropertyInfo& p, const OpSchema& op) {
  switch (p.scale_values) {
    case ScaleValuesWanted::exact_first: {
      const size_t i = pick_weighted(rng, {5, 3, 2});
      if (i == 0 && !op_oracle(op).exact_at_scale) return ScaleValues::rounding;
      return i == 0 ? ScaleValues::exact : i == 1 ? ScaleValues::rounding : ScaleValues::cancelling;
    }
    case ScaleValuesWanted::rounding_sums:  // exact values would hide every order bug
      return rng.chance(0.6) ? ScaleValues::rounding : ScaleValues::cancelling;
    case ScaleValuesWanted::rounding: break;
  }
  return ScaleValues::rounding;
}

std::string plan_for(Prng& rng, const PropertyInfo& p) {
  if (p.plans == PlanNeed::segments_move) {  // plans whose batches hold whole segments (generators.h)
    static const std::vector<std::string> k = {"gate_groups", "gate_groups", "singletons", "partition", "probe", "prior_art"};
    return pick(rng, k);
  }
  if (p.plans == PlanNeed::split) return pick(rng, split_plan_kinds());  // 2 to 64 parts, contiguous or not
  return pick(rng, all_plan_kinds());
}

// A plan kind that moves rows by construction (given rows over >= 3 gates).
const char* moving_plan(const PropertyInfo& p) {
  return p.plans == PlanNeed::segments_move ? "gate_groups" : p.plans == PlanNeed::split ? "micro_batches" : "reversal";
}

bool fits(const ScaleSpec& s, const ScaleLimits& l, int sets) {
  if (s.rows * s.dim > l.max_elements) return false;
  // the plan's largest batch may hold a few rows more than the case (repeat plans)
  return scale_case_bytes(*s.op, s.dtype, s.rows + 64, s.dim, s.gates, sets) <= l.memory_bytes;
}

// One draw of a rung; may not fit the limits (the caller draws again).
ScaleSpec draw_rung(Prng& rng, int rung, const PropertyInfo& prop, const OpSchema& op, const ScaleLimits& l) {
  const bool gpu = l.device == Device::cuda;
  ScaleSpec s;
  s.op = &op;
  static const std::vector<DType> dtypes = {DType::bf16, DType::f16, DType::f32};
  s.dtype = pick(rng, dtypes);
  std::vector<std::string> patterns = all_index_patterns();
  patterns.push_back("long_segment");
  if (prop.plans == PlanNeed::segments_move)  // one gate for every row leaves no segment to move
    patterns.erase(std::remove(patterns.begin(), patterns.end(), "single_gate"), patterns.end());
  s.index_pattern = pick(rng, patterns);
  auto row_dim = [&] { return gpu ? pick(rng, gpu_row_dims()) : pick(rng, small_dims()); };
  switch (rung) {
    case kGridRung:
      s.rows = pick(rng, grid_rows());
      s.dim = row_dim();
      break;
    case kThreadsRung: {
      static const std::vector<int64_t> e = {kThreadsEdge - 1, kThreadsEdge, kThreadsEdge + 1, 65536 * 256 + 1,
                                             65535 * 1024 + 1};
      static const std::vector<int64_t> d = {1, 127, 128, 129, 256, 257, 3072};
      s.dim = pick(rng, d);
      s.rows = std::max<int64_t>(2, pick(rng, e) / s.dim + rng.range(-1, 1));
      break;
    }
    case kModelRung: {
      static const std::vector<int64_t> r = {4097, 8192, 32768, 65537};
      s.dim = pick(rng, model_dims());
      // On the CPU a few rows, so that a wide case costs what a small one does.
      s.rows = gpu ? pick(rng, r) : std::min(pick(rng, cpu_wide_rows()), std::max<int64_t>(2, kCpuWideElements / s.dim));
      break;
    }
    case kSegmentRung: {
      const int64_t len = pick(rng, segment_rows());
      if (prop.plans != PlanNeed::segments_move && rng.chance(0.2)) {
        s.index_pattern = "single_gate";
        s.rows = len;
      } else {
        s.index_pattern = "long_segment";
        s.segment = len;
        s.rows = len + rng.range(len / 8, len);
      }
      s.dim = row_dim();
      break;
    }
    case kManyGatesRung: {
      s.rows = pick(rng, grid_rows());
      s.dim = row_dim();
      static const std::vector<std::string> p = {"uniform", "sorted_equal", "sorted_random", "identity", "unused_gates"};
      s.index_pattern = pick(rng, p);
      s.gates = rng.chance(0.5) ? s.rows / 3 : s.rows + (s.index_pattern == "unused_gates" ? 1 : 0);
      if (s.index_pattern == "identity") s.gates = rng.chance(0.5) ? s.rows : s.rows / 3;
      break;
    }
    case kPast2To31Rung: {
      static const std::vector<int64_t> d = {3072, 5376, 8192, 4099, 2053, 1031};
      s.dim = pick(rng, d);
      s.rows = kInt32Edge / s.dim + 1 + rng.range(0, 64);
      if (s.dtype == DType::f32 && !fits(s, l, prop.scale_output_sets)) s.dtype = rng.chance(0.5) ? DType::bf16 : DType::f16;
      break;
    }
    default: {  // kPatternRung
      s.rows = rng.chance(0.5) ? pick(rng, grid_rows()) : rng.range(1025, 262144);
      s.dim = row_dim();
      break;
    }
  }
  if (s.index_pattern == "long_segment" && s.segment == 0) s.segment = std::max<int64_t>(1, s.rows * rng.range(1, 7) / 8);
  if (s.gates == 0) s.gates = gates_for(rng, s.index_pattern, s.rows);
  // A split's check brings the row reductions and a state of them a part to
  // the host (scale_split.cpp): its gates cut to fit, its rows kept.
  if (prop.plans == PlanNeed::split && s.gates * s.dim > kScaleSplitTableElements)
    s.gates = std::max<int64_t>(1, kScaleSplitTableElements / s.dim);
  s.rung = rung_name(rung);
  return s;
}

}  // namespace

double scale_share_for(const ScaleOptions& o, Device d) {
  if (!o.enabled) return 0;
  if (o.share >= 0) return o.share;
  return d == Device::cuda ? kDefaultScaleShareCuda : kDefaultScaleShareCpu;
}

bool has_scale_version(const std::string& p) { return property_info(p).scale != nullptr; }

int scale_output_sets(const std::string& p) { return property_info(p).scale_output_sets; }

ScaleLimits scale_limits(Device d, const ScaleOptions& o) {
  ScaleLimits l;
  l.device = d;
  const uint64_t free_b = scale_free_bytes(d);
  if (d == Device::cpu) {
    l.max_elements = kCpuMaxElements;
    l.memory_bytes = o.memory_bytes ? o.memory_bytes : std::min<uint64_t>(free_b / 4, uint64_t(2) << 30);
    l.past_2_31_note = "not drawn: at most " + std::to_string(kCpuMaxElements) +
                       " elements a tensor on the CPU, where small dims keep rows past 65,536 cheap";
    return l;
  }
  l.memory_bytes = o.memory_bytes ? o.memory_bytes : uint64_t(double(free_b) * 0.6);
  l.max_elements = int64_t(1) << 34;
  // the smallest case past 2^31 elements: 16-bit, one output set
  const uint64_t need = scale_case_bytes(DType::bf16, kInt32Edge / 3072 + 65, 3072, 9, 1);
  if (l.memory_bytes < need)
    l.past_2_31_note = "not drawn: a case past 2^31 elements needs " + std::to_string((need >> 30) + 1) +
                       " GiB of device memory, the budget is " + std::to_string(l.memory_bytes >> 30) + " GiB (" +
                       std::to_string(free_b >> 30) + " GiB free)";
  return l;
}

ScaleSpec draw_scale_case(uint64_t seed, const std::string& property, int64_t index, const ScaleLimits& l) {
  return draw_scale_case(gate_residual_schema(), seed, property, index, l);
}

ScaleSpec draw_scale_case(const OpSchema& op, uint64_t seed, const std::string& property, int64_t index,
                          const ScaleLimits& l) {
  return *draw_scale_case_if(op, seed, property, index, l, nullptr);
}

std::optional<ScaleSpec> draw_scale_case_if(const OpSchema& op, uint64_t seed, const std::string& property,
                                            int64_t index, const ScaleLimits& l,
                                            const std::function<bool(const ScaleSpec&)>& keep) {
  const PropertyInfo& p = property_info(property);
  Prng rng(seed ^ fnv1a("scale/" + property) ^ scale_mix(uint64_t(index) * 0x9e3779b97f4a7c15ull + 1));
  const bool gpu = l.device == Device::cuda;
  const bool big_ok = gpu && l.past_2_31_note.empty();
  // grid, threads, model, segment, many gates, past 2^31, any pattern
  const std::vector<int> weights = gpu ? std::vector<int>{20, 10, 15, 20, 10, big_ok ? 15 : 0, 10}
                                       : std::vector<int>{30, 0, 20, 30, 20, 0, 20};
  // The first draws of every property open with the edges that matter most,
  // so that even a short budget reaches them: the grid's rows, past 2^31
  // elements (where the memory allows; on the CPU: wide rows), a long
  // segment. Then by weight.
  const std::vector<int> opening = gpu ? std::vector<int>{kGridRung, big_ok ? kPast2To31Rung : kThreadsRung, kSegmentRung}
                                       : std::vector<int>{kGridRung, kModelRung, kSegmentRung, kManyGatesRung};
  const int sets = scale_output_sets(property);
  ScaleSpec s;
  bool ok = false;
  for (int attempt = 0; attempt < 8 && !ok; ++attempt) {
    const bool open = index < int64_t(opening.size()) && attempt == 0;
    s = draw_rung(rng, open ? opening[size_t(index)] : int(pick_weighted(rng, weights)), p, op, l);
    ok = fits(s, l, sets) || (s.dtype != DType::bf16 && (s.dtype = DType::bf16, fits(s, l, sets)));
  }
  if (!ok) {  // the smallest rung: 65,537 rows of one column
    s = ScaleSpec{};
    s.op = &op;
    s.rows = 65537;
    s.dim = 1;
    s.gates = 3;
    s.index_pattern = "uniform";
    s.rung = rung_name(kGridRung);
  }
  if (keep && !keep(s)) return std::nullopt;
  s.index_seed = rng.next();
  s.value_seed = rng.next();
  s.values = values_for(rng, p, op);
  // A plan that moves rows (whole segments where the property compares
  // segment sums), as the small tier's generator guarantees: a vacuous case
  // would fail as one.
  const bool invariance = p.plans != PlanNeed::none;
  // The index is made once per (pattern, gates), not once per candidate plan:
  // at 16 million rows each is seconds, and a draw may try sixteen plans.
  Case shadow;
  std::string shadow_key;
  auto moves_rows = [&] {
    const std::string key = s.index_pattern + "/" + std::to_string(s.gates) + "/" + std::to_string(s.rows);
    if (key != shadow_key) {
      shadow = make_case(s.dtype, s.rows, 0, s.gates);
      shadow.index = make_scale_index(s);
      shadow_key = key;
    }
    BatchPlan full = make_plan(s.plan_kind, shadow, s.plan_seed, 64);  // as make_scale_case makes it
    BatchPlan kept;
    kept.kind = full.kind;
    kept.repeats = full.repeats;
    for (auto& b : full.batches)
      if (!b.empty()) kept.batches.push_back(std::move(b));
    // a split moves rows when it has two parts (the shadow has no columns, which plan_moves_rows would count)
    if (p.plans == PlanNeed::split) return is_split_kind(kept.kind) && kept.batches.size() >= 2;
    shadow.plan.reset();
    if (!kept.batches.empty() || full.batches.empty()) shadow.plan = std::move(kept);
    return plan_moves_rows(property, shadow);
  };
  // Past a million rows each candidate's check costs seconds: start from the
  // plan that moves rows by construction (whole gate groups over >= 3 gates).
  const int first = s.rows > (int64_t(1) << 20) ? 6 : 0;
  bool moved = !invariance;
  for (int attempt = first; attempt < 16 && !moved; ++attempt) {
    s.plan_seed = rng.next();
    s.plan_kind = attempt < 6 ? plan_for(rng, p) : moving_plan(p);
    if (moves_rows()) moved = true;
    else if (attempt == 6) {  // one used gate leaves no whole segment to move: spread the rows over three
      s.gates = std::max<int64_t>(s.gates, 3);
      if (s.index_pattern != "long_segment") s.index_pattern = "uniform";
    }
  }
  // A few rows (the CPU's wide rungs draw two or three) may all fall in one
  // gate, whatever the plan: more rows, spread over three gates or more.
  for (int64_t grow = std::max<int64_t>(16, s.rows * 4); !moved && grow <= 4096; grow *= 4) {
    ScaleSpec more = s;
    more.rows = grow;
    more.gates = std::max<int64_t>(s.gates, 3);
    if (more.index_pattern != "long_segment") more.index_pattern = "uniform";
    if (!fits(more, l, sets)) break;
    s = more;
    for (int attempt = 0; attempt < 4 && !moved; ++attempt) {
      s.plan_seed = rng.next();
      s.plan_kind = moving_plan(p);
      moved = moves_rows();
    }
  }
  if (s.values == ScaleValues::exact) {
    static const std::vector<int32_t> frac = {0, 0, 1, 2};
    s.frac_bits = pick(rng, frac);
    s.value_bound = exact_value_bound(s.dtype, s.frac_bits, longest_segment(make_scale_index(s), s.gates));
    if (s.value_bound == 0) s.values = ScaleValues::rounding;  // no exact values fit: round instead
  }
  if (!op.scalars.empty()) {  // a stream of their own: the draws above are the same for every op
    Prng sr(rng.next() ^ 0x5ca1a75ull);
    draw_scale_scalars(&s, sr);
  }
  return s;
}

bool ScaleShare::due(double pair_seconds, int64_t cases_so_far) const {
  if (share_ <= 0) return false;
  if (time_budget_) return seconds_ < share_ * pair_seconds;
  return int64_t(std::floor(double(cases_so_far + 1) * share_ + 1e-9)) > cases_;
}

const std::vector<std::string>& scale_edges() {
  static const std::vector<std::string> v = {"rows > 65,535", "elements > 65,535 x 256", "elements > 2^31 - 1",
                                             "tensor bytes > 2^32"};
  return v;
}

std::vector<std::string> edges_passed(const ScaleCase& c) {
  std::vector<std::string> e;
  const int64_t n = c.elements();
  if (c.rows > kGridLimit) e.push_back(scale_edges()[0]);
  if (n > kThreadsEdge) e.push_back(scale_edges()[1]);
  if (n > kInt32Edge) e.push_back(scale_edges()[2]);
  if (n * dtype_size(c.dtype) > (int64_t(1) << 32)) e.push_back(scale_edges()[3]);
  return e;
}

void ScaleCoverage::add(const ScaleCase& c, double secs) {
  ++cases;
  seconds += secs;
  max_rows = std::max(max_rows, c.rows);
  max_dim = std::max(max_dim, c.dim);
  max_segment = std::max(max_segment, longest_segment(c.index, c.gates));
  max_elements = std::max(max_elements, c.elements());
  for (const auto& e : edges_passed(c)) ++past[e];
  ++rungs[c.spec.rung.empty() ? "(file)" : c.spec.rung];
  if (c.dim >= kWideDimCounted) ++wide_dims[c.dim];
}

void ScaleCoverage::add(const ScaleCoverage& o) {
  cases += o.cases;
  seconds += o.seconds;
  max_rows = std::max(max_rows, o.max_rows);
  max_dim = std::max(max_dim, o.max_dim);
  max_segment = std::max(max_segment, o.max_segment);
  max_elements = std::max(max_elements, o.max_elements);
  for (const auto& [k, n] : o.past) past[k] += n;
  for (const auto& [k, n] : o.rungs) rungs[k] += n;
  for (const auto& [d, n] : o.wide_dims) wide_dims[d] += n;
  for (const auto& [k, n] : o.skipped) skipped[k] += n;
}

}  // namespace gatecheck
