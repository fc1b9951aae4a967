#include "case_decoder.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <vector>

namespace gatecheck::fuzz {

namespace {
const std::vector<std::string>& plan_kind_choices() {
  static const std::vector<std::string> v = [] {
    std::vector<std::string> k = all_plan_kinds();
    k.insert(k.end(), split_plan_kinds().begin(), split_plan_kinds().end());
    return k;
  }();
  return v;
}
}  // namespace

int plan_choices() { return int(plan_kind_choices().size()) + 1; }

std::string plan_choice_name(int plan) {
  const auto& kinds = plan_kind_choices();
  return plan >= 0 && plan < int(kinds.size()) ? kinds[size_t(plan)] : "none";
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

// The property generators' edge lists, cut to the decoder's limits.
std::vector<int64_t> edges_up_to(const std::vector<int64_t>& edges, int64_t max) {
  std::vector<int64_t> v;
  for (int64_t e : edges)
    if (e <= max) v.push_back(e);
  if (v.empty()) v.push_back(std::min<int64_t>(1, max));
  return v;
}

// Each side of kGradGateTileRows (256), where the grad_gate tile fold starts.
const int64_t kTileRows[] = {255, 256, 257, 259};

int64_t pick_rows(FuzzedDataProvider& fdp, const DecodeLimits& lim) {
  static const std::vector<int64_t> edges = edges_up_to(edges::rows(), 1 << 20);
  const int how = fdp.ConsumeIntegralInRange<int>(0, 15);
  if (how == 15 && lim.tile_rows > 0)
    return std::min(kTileRows[fdp.ConsumeIntegralInRange<int>(0, 3)], lim.tile_rows);
  if (how >= 10) return fdp.ConsumeIntegralInRange<int64_t>(0, lim.max_rows);
  const auto e = edges_up_to(edges, lim.max_rows);
  return e[fdp.ConsumeIntegralInRange<size_t>(0, e.size() - 1)];
}

int64_t pick_dim(FuzzedDataProvider& fdp, const OpSchema& op, const DecodeLimits& lim, int64_t rows) {
  // Large-row cases keep dim at most 16 so an execution stays cheap, yet wide
  // enough for the CUDA kernels' 16-byte vectors (8 bf16/f16) across tiles.
  const int64_t max_dim = std::max<int64_t>(1, rows > lim.max_rows ? std::min<int64_t>(lim.max_dim, 16) : lim.max_dim);
  const int how = fdp.ConsumeIntegralInRange<int>(0, 15);
  if (how == 15) return rows > 0 ? std::min<int64_t>(op.min_dim_with_rows, max_dim) : 0;  // an empty problem where valid
  if (how >= 10) return fdp.ConsumeIntegralInRange<int64_t>(1, max_dim);
  const auto e = edges_up_to(edges::dims(), max_dim);
  return e[fdp.ConsumeIntegralInRange<size_t>(0, e.size() - 1)];
}

// gates: 1, 2, 3, 9, about rows, or more than rows (unused gates).
int64_t pick_gates(FuzzedDataProvider& fdp, const DecodeLimits& lim, int64_t rows) {
  int64_t g = 1;
  switch (fdp.ConsumeIntegralInRange<int>(0, 5)) {
    case 0: g = 1; break;
    case 1: g = 2; break;
    case 2: g = 3; break;
    case 3: g = 9; break;
    case 4: g = rows; break;
    default: g = rows + fdp.ConsumeIntegralInRange<int64_t>(1, 5); break;
  }
  return std::clamp<int64_t>(g, 1, lim.max_gates);
}

// A patch: one element of one tensor (or one index entry) set to exact bits.
void apply_patch(Case& c, FuzzedDataProvider& fdp) {
  const int n = int(c.inputs.size());  // the op's tensors, then the index
  const int which = fdp.ConsumeIntegralInRange<int>(0, n);
  const uint32_t bits = fdp.ConsumeIntegral<uint32_t>();
  if (which == n) {
    if (c.rows == 0) return;
    const auto r = fdp.ConsumeIntegralInRange<int64_t>(0, c.rows - 1);
    c.index[size_t(r)] = int64_t(bits % uint64_t(c.gates));
    return;
  }
  HostTensor& t = c.inputs[size_t(which)];
  if (t.numel() == 0) return;
  const uint32_t mask = c.dtype == DType::f32 ? 0xffffffffu : 0xffffu;
  t.set_bits(fdp.ConsumeIntegralInRange<int64_t>(0, t.numel() - 1), bits & mask);
}

}  // namespace

Case decode_case(const OpSchema& op, const uint8_t* data, size_t size, const DecodeLimits& lim, DecodeInfo* info) {
  FuzzedDataProvider fdp(data, size);
  static const DType kDtypes[] = {DType::bf16, DType::f16, DType::f32};
  const auto& patterns = all_index_patterns();
  const auto values = value_classes_of(op);
  DecodeInfo d;
  CaseSpec& s = d.spec;
  s.op = &op;
  s.dtype = kDtypes[fdp.ConsumeIntegralInRange<int>(0, 2)];
  s.rows = pick_rows(fdp, lim);
  s.dim = pick_dim(fdp, op, lim, s.rows);
  d.pattern = fdp.ConsumeIntegralInRange<int>(0, int(patterns.size()) - 1);
  d.values = fdp.ConsumeIntegralInRange<int>(0, int(values.size()) - 1);
  d.plan = fdp.ConsumeIntegralInRange<int>(0, plan_choices() - 1);
  s.gates = pick_gates(fdp, lim, s.rows);
  s.index_pattern = patterns[size_t(d.pattern)];
  s.value_class = values[size_t(d.values)];
  const bool has_plan = d.plan < plan_choices() - 1;
  s.plan_kind = has_plan ? plan_choice_name(d.plan) : "partition";
  s.index_seed = fdp.ConsumeIntegral<uint64_t>();
  s.value_seed = fdp.ConsumeIntegral<uint64_t>();
  s.plan_seed = fdp.ConsumeIntegral<uint64_t>();

  GenLimits gl;
  gl.op = &op;
  gl.max_rows = std::max(lim.max_rows, lim.tile_rows);
  gl.max_dim = lim.max_dim;
  gl.max_gates = lim.max_gates;
  Case c = make_case_from_spec(s, gl.max_singletons);
  if (!has_plan || s.rows == 0) c.plan.reset();

  d.patches = fdp.ConsumeIntegralInRange<int>(0, 8);
  for (int i = 0; i < d.patches && fdp.remaining_bytes() > 0; ++i) apply_patch(c, fdp);
  d.shape_class = shape_class(s.rows, s.dim);
  if (info) *info = d;
  return c;
}

}  // namespace gatecheck::fuzz
