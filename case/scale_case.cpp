#include "scale_case.h"

#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <sstream>
#include <stdexcept>

#include "case_spec.h"
#include "fnv1a.h"
#include "prng.h"

namespace gatecheck {

namespace {
// Bounds on what a spec may describe: the index is materialised on the host
// (8 bytes a row), and nothing larger than this is ever drawn.
constexpr int64_t kMaxScaleRows = int64_t(1) << 26;
constexpr int64_t kMaxScaleElements = int64_t(1) << 36;
constexpr int32_t kMaxFracBits = 8;

int precision_of(DType t) { return t == DType::f32 ? 24 : t == DType::f16 ? 11 : 8; }

bool ascending_in(const std::vector<int64_t>& v, int64_t n) {
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] < 0 || v[i] >= n || (i && v[i] <= v[i - 1])) return false;
  return true;
}
}  // namespace

const std::vector<std::string>& scale_only_index_patterns() {
  static const std::vector<std::string> v = {"long_segment"};
  return v;
}

bool is_scale_index_pattern(const std::string& p) {
  for (const auto* list : {&all_index_patterns(), &scale_only_index_patterns()})
    if (std::find(list->begin(), list->end(), p) != list->end()) return true;
  return false;
}

const char* scale_values_name(ScaleValues v) {
  switch (v) {
    case ScaleValues::exact: return "exact";
    case ScaleValues::cancelling: return "cancelling";
    default: return "rounding";
  }
}

bool parse_scale_values(const std::string& s, ScaleValues* out) {
  for (ScaleValues v : {ScaleValues::exact, ScaleValues::rounding, ScaleValues::cancelling})
    if (s == scale_values_name(v)) {
      *out = v;
      return true;
    }
  return false;
}

ValueRule ScaleSpec::rule() const {
  ValueRule r{value_seed, int32_t(values), value_bound, frac_bits};
  size_t k = 0;
  for (const auto& in : op->inputs) {
    if (in.role == Role::index) continue;
    if (in.role == Role::row && in.fill == Fill::factor) {
      r.cancel_tensor = scale_tensor_of_input(k);
      break;
    }
    ++k;
  }
  return r;
}

namespace {
// The float inputs of op, in Case::inputs order.
std::vector<const OpInput*> float_inputs(const OpSchema& op) {
  std::vector<const OpInput*> v;
  for (const auto& in : op.inputs)
    if (in.role != Role::index) v.push_back(&in);
  return v;
}
}  // namespace

Role ScaleCase::input_role(size_t k) const { return float_inputs(op()).at(k)->role; }

uint64_t ScaleCase::input_pos(size_t k, int64_t row, int64_t col) const {
  switch (input_role(k)) {
    case Role::table: return gate_pos(row, col);
    case Role::column: return uint64_t(orig_col(col));
    default: return row_pos(row, col);
  }
}

double ScaleCase::input_value(size_t k, int64_t row, int64_t col) const {
  return double(bits_to_float(dtype, input_bits(k, row, col)));
}

bool ScaleSpec::operator==(const ScaleSpec& o) const {
  return op == o.op && scalars == o.scalars && dtype == o.dtype && rows == o.rows && dim == o.dim && gates == o.gates && index_pattern == o.index_pattern &&
         segment == o.segment && index_seed == o.index_seed && values == o.values && value_bound == o.value_bound &&
         frac_bits == o.frac_bits && value_seed == o.value_seed && plan_kind == o.plan_kind && plan_seed == o.plan_seed &&
         rung == o.rung;
}

bool ScaleView::operator==(const ScaleView& o) const {
  return rows == o.rows && cols == o.cols && gates == o.gates && remap == o.remap && all_batches == o.all_batches &&
         batches == o.batches && no_plan == o.no_plan;
}

Case ScaleCase::shadow() const {
  Case s = make_case(op(), dtype, rows, 0, gates);
  if (!spec.scalars.empty()) s.scalars = spec.scalars;
  s.index = index;
  s.plan = plan;
  s.index_pattern = spec.index_pattern;
  s.value_class = std::string("scale:") + scale_values_name(spec.values);
  return s;
}

std::vector<int64_t> make_scale_index(const ScaleSpec& s) {
  if (s.index_pattern != "long_segment") return make_index(s.index_pattern, s.rows, s.gates, s.index_seed);
  std::vector<int64_t> idx(size_t(std::max<int64_t>(s.rows, 0)), 0);
  if (s.rows <= 0 || s.gates <= 0) return idx;
  Prng rng(s.index_seed);
  const int64_t len = std::max<int64_t>(1, std::min(s.segment, s.rows));
  const int64_t at = rng.range(0, s.rows - len), giant = rng.below(s.gates);
  for (int64_t r = 0; r < s.rows; ++r) {
    if (r >= at && r < at + len) {
      idx[size_t(r)] = giant;
    } else if (s.gates > 1) {
      const int64_t k = rng.below(s.gates - 1);  // any gate but the giant one
      idx[size_t(r)] = k >= giant ? k + 1 : k;
    } else {
      idx[size_t(r)] = giant;
    }
  }
  return idx;
}

std::string scale_spec_problem(const ScaleSpec& s, const ScaleView& v) {
  auto num = [](int64_t x) { return std::to_string(x); };
  if (s.rows < 0 || s.dim < 0 || s.gates < 0) return "negative shape";
  if (s.rows > kMaxScaleRows || s.gates > kMaxScaleRows)
    return "rows " + num(s.rows) + " or gates " + num(s.gates) + " above the limit of " + num(kMaxScaleRows);
  const int64_t n = checked_elements(s.rows, s.dim), ng = checked_elements(s.gates, s.dim);
  if (n < 0 || ng < 0 || n > kMaxScaleElements || ng > kMaxScaleElements)
    return "more than " + num(kMaxScaleElements) + " elements a tensor";
  if (!s.op) return "no op";
  if (const std::string why = case_shape_problem(*s.op, s.rows, s.dim, s.gates); !why.empty()) return why;
  if (!s.scalars.empty() && s.scalars.size() != s.op->scalars.size())
    return std::to_string(s.scalars.size()) + " scalars for " + s.op->name + "'s " + std::to_string(s.op->scalars.size());
  if (!is_scale_index_pattern(s.index_pattern)) return "unknown index pattern '" + s.index_pattern + "'";
  if (s.index_pattern == "long_segment" && (s.segment < 1 || s.segment > s.rows))
    return "long_segment needs 1 <= segment <= rows (segment " + num(s.segment) + ", rows " + num(s.rows) + ")";
  if (std::find(all_plan_kinds().begin(), all_plan_kinds().end(), s.plan_kind) == all_plan_kinds().end() &&
      !is_split_kind(s.plan_kind))  // a split: split_invariance's
    return "unknown plan kind '" + s.plan_kind + "'";
  if (s.values == ScaleValues::exact && (s.value_bound < 0 || s.value_bound > (1 << 15)))
    return "value_bound " + num(s.value_bound) + " outside [0, 32768]";
  if (s.frac_bits < 0 || s.frac_bits > kMaxFracBits) return "frac_bits " + num(s.frac_bits) + " outside [0, 8]";
  if (!ascending_in(v.rows, s.rows)) return "view rows must be ascending rows of the generated case";
  if (!ascending_in(v.cols, s.dim)) return "view cols must be ascending columns of the generated case";
  if (v.gates.empty() != v.remap.empty()) return "view gates and remap go together";
  if (!v.remap.empty()) {
    if (int64_t(v.remap.size()) != s.gates) return "view remap needs one entry per generated gate (" + num(s.gates) + ")";
    for (int64_t g : v.gates)
      if (g < 0 || g >= s.gates) return "view gate " + num(g) + " outside [0, " + num(s.gates) + ")";
    for (int64_t k : v.remap)
      if (k < -1 || k >= int64_t(v.gates.size())) return "view remap entry " + num(k) + " names no kept gate";
  }
  for (int64_t b : v.batches)
    if (b < 0) return "view batch " + num(b) + " is negative";
  return "";
}

ScaleCase make_scale_case(const ScaleSpec& s, const ScaleView& v, int64_t max_singletons) {
  if (const std::string why = scale_spec_problem(s, v); !why.empty())
    throw std::invalid_argument("scale case: " + why);
  ScaleCase c;
  c.spec = s;
  c.view = v;
  c.dtype = s.dtype;
  c.rows = v.rows.empty() ? s.rows : int64_t(v.rows.size());
  c.dim = v.cols.empty() ? s.dim : int64_t(v.cols.size());
  c.gates = v.gates.empty() ? s.gates : int64_t(v.gates.size());
  if (const std::string why = case_shape_problem(*s.op, c.rows, c.dim, c.gates); !why.empty())
    throw std::invalid_argument("scale case view: " + why);
  const std::vector<int64_t> orig = make_scale_index(s);
  c.index.resize(size_t(c.rows));
  for (int64_t r = 0; r < c.rows; ++r) {
    const int64_t g = orig[size_t(c.orig_row(r))];
    const int64_t k = v.remap.empty() ? g : v.remap[size_t(g)];
    if (k < 0) throw std::invalid_argument("scale case view: row " + std::to_string(c.orig_row(r)) + " uses gate " +
                                           std::to_string(g) + ", which the view dropped");
    c.index[size_t(r)] = k;
  }
  if (v.no_plan) return c;
  // The generated case's plan, restricted to the kept rows and batches.
  Case whole = make_case(s.dtype, s.rows, 0, s.gates);
  whole.index = orig;
  const BatchPlan full = make_plan(s.plan_kind, whole, s.plan_seed, max_singletons);
  std::vector<int64_t> at;  // original row -> kept row, -1 if dropped
  if (!v.rows.empty()) {
    at.assign(size_t(s.rows), -1);
    for (int64_t r = 0; r < c.rows; ++r) at[size_t(v.rows[size_t(r)])] = r;
  }
  BatchPlan p;
  p.kind = full.kind;
  p.repeats = full.repeats;
  auto keep_batch = [&](size_t b) {
    std::vector<int64_t> nb;
    for (int64_t r : full.batches[b]) {
      const int64_t k = at.empty() ? r : at[size_t(r)];
      if (k >= 0) nb.push_back(k);
    }
    if (!nb.empty()) p.batches.push_back(std::move(nb));
  };
  if (v.all_batches) {
    for (size_t b = 0; b < full.batches.size(); ++b) keep_batch(b);
  } else {
    for (int64_t b : v.batches)
      if (size_t(b) < full.batches.size()) keep_batch(size_t(b));
  }
  if (!p.batches.empty() || full.batches.empty()) c.plan = std::move(p);
  return c;
}

int64_t longest_segment(const std::vector<int64_t>& index, int64_t gates) {
  std::vector<int64_t> n(size_t(std::max<int64_t>(gates, 0)), 0);
  int64_t most = 0;
  for (int64_t k : index)
    if (k >= 0 && k < gates) most = std::max(most, ++n[size_t(k)]);
  return most;
}

int32_t exact_value_bound(DType t, int32_t frac_bits, int64_t segment) {
  if (frac_bits < 0 || frac_bits > kMaxFracBits) return 0;
  const int64_t two_p = int64_t(1) << precision_of(t), step = int64_t(1) << frac_bits;
  int64_t k = 0;
  // the dtype's conditions: K*2^m + K*K <= 2^p (which implies K*K <= 2^p)
  while (k < (1 << 15) && (k + 1) * step + (k + 1) * (k + 1) <= two_p) ++k;
  // the fp32 sum's: segment * K*K <= 2^24
  if (segment > 0)
    while (k > 0 && segment * k * k > (int64_t(1) << 24)) --k;
  return int32_t(k);
}

std::string exact_values_problem(const ScaleCase& c) {
  if (c.spec.values != ScaleValues::exact) return "";
  const int64_t seg = longest_segment(c.index, c.gates);
  const int32_t bound = exact_value_bound(c.dtype, c.spec.frac_bits, seg);
  if (c.spec.value_bound <= bound) return "";
  return "exact values |k| <= " + std::to_string(c.spec.value_bound) + " (steps of 2^-" + std::to_string(c.spec.frac_bits) +
         ") are not exact by construction in " + dtype_name(c.dtype) + " with a segment of " + std::to_string(seg) +
         " rows: the bound is " + std::to_string(bound);
}

Case materialise(const ScaleCase& c) {
  if (c.elements() > kMaxMaterialiseElements || c.gates * c.dim > kMaxMaterialiseElements)
    throw std::invalid_argument("materialise: " + describe(c) + " is too large for explicit values");
  Case m = make_case(c.op(), c.dtype, c.rows, c.dim, c.gates);
  if (!c.spec.scalars.empty()) m.scalars = c.spec.scalars;
  m.index = c.index;
  m.plan = c.plan;
  for (size_t k = 0; k < m.inputs.size(); ++k) {
    HostTensor& h = m.inputs[k];
    for (int64_t r = 0; r < h.rows; ++r)
      for (int64_t j = 0; j < c.dim; ++j) h.set_bits(r * c.dim + j, c.input_bits(k, r, j));
  }
  m.index_pattern = c.spec.index_pattern;
  m.value_class = std::string("scale:") + scale_values_name(c.spec.values);
  return m;
}

uint64_t scale_case_bytes(const OpSchema& op, DType t, int64_t rows, int64_t dim, int64_t gates, int output_sets) {
  const uint64_t es = uint64_t(dtype_size(t));
  auto bytes = [&](Role r) {
    return r == Role::index ? uint64_t(rows) * 8 : uint64_t(role_rows(r, rows, gates)) * uint64_t(role_cols(r, dim)) * es;
  };
  uint64_t in = 0, out = 0;
  for (const auto& i : op.inputs) in += bytes(i.role);
  for (const auto& o : op.outputs) out += bytes(o.role);
  return in + uint64_t(output_sets) * out;
}

std::string describe(const ScaleCase& c) {
  std::ostringstream s;
  s << dtype_name(c.dtype) << " rows=" << c.rows << " dim=" << c.dim << " gates=" << c.gates
    << " pattern=" << c.spec.index_pattern;
  if (c.spec.index_pattern == "long_segment") s << "(" << c.spec.segment << ")";
  s << " values=" << scale_values_name(c.spec.values);
  if (c.spec.values == ScaleValues::exact)
    s << "(|k|<=" << c.spec.value_bound << (c.spec.frac_bits ? ", 2^-" + std::to_string(c.spec.frac_bits) : "") << ")";
  if (c.plan) s << " plan=" << c.plan->kind << "(" << c.plan->batches.size() << " batches)";
  for (size_t i = 0; i < c.spec.scalars.size(); ++i) s << " " << c.op().scalars[i].name << "=" << c.spec.scalars[i];
  if (!c.view.rows.empty() || !c.view.cols.empty() || !c.view.gates.empty())
    s << " (of generated rows=" << c.spec.rows << " dim=" << c.spec.dim << " gates=" << c.spec.gates << ")";
  const bool narrowed = !c.view.rows.empty() || !c.view.cols.empty() || !c.view.gates.empty();
  if (narrowed)  // a shrunk case: its own size, not the tag of the draw it came from
    s << " [" << scale_size_tag(c.rows, c.dim) << (c.spec.rung.empty() ? "" : "; shrunk from a draw for " + c.spec.rung)
      << "]";
  else if (!c.spec.rung.empty())
    s << " [" << c.spec.rung << "]";
  return s.str();
}

std::string scale_size_tag(int64_t rows, int64_t dim) {
  const int64_t elements = rows * dim;
  std::ostringstream s;
  if (elements > int64_t(INT32_MAX)) s << "past 2^31 elements";
  else if (rows > 65535) s << "past 65,535 rows";
  else if (elements >= int64_t(65535) * 256) s << "at least 65,535 x 256 elements";
  else s << "under 65,535 x 256 elements";
  return s.str();
}

std::string scale_digest(const ScaleSpec& s, const ScaleView& view) {
  uint64_t h = kFnv1aOffset;
  auto mix = [&](const void* p, size_t n) { h = fnv1a(p, n, h); };
  const int32_t ints[] = {int32_t(s.dtype), int32_t(s.values), s.value_bound, s.frac_bits};
  const int64_t longs[] = {s.rows, s.dim, s.gates, s.segment};
  const uint64_t seeds[] = {s.index_seed, s.value_seed, s.plan_seed};
  mix(ints, sizeof ints);
  mix(longs, sizeof longs);
  mix(seeds, sizeof seeds);
  h = fnv1a(s.index_pattern, h);
  h = fnv1a(s.plan_kind, h);
  if (s.op != &gate_residual_schema()) {  // (gate_residual's digests are those of the files it has saved)
    h = fnv1a(std::string(s.op->name), h);
    mix(s.scalars.data(), s.scalars.size() * sizeof(double));
  }
  for (const auto* v : {&view.rows, &view.cols, &view.gates, &view.remap, &view.batches})
    mix(v->data(), v->size() * sizeof(int64_t));
  const uint8_t flags[] = {uint8_t(view.all_batches), uint8_t(view.no_plan)};
  mix(flags, sizeof flags);
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace gatecheck
