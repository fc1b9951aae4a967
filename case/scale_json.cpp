#include "scale_json.h"

#include <map>

#include "case_json_fields.h"

namespace gatecheck {

using nlohmann::json;
using json_fields::fail;
using json_fields::field;
using json_fields::shape_field;

namespace {

// Ascending indices as [begin, end) runs: a halved or block-deleted row set
// stays a few runs long.
json runs_of(const std::vector<int64_t>& v) {
  json runs = json::array();
  for (size_t i = 0; i < v.size();) {
    size_t j = i + 1;
    while (j < v.size() && v[j] == v[j - 1] + 1) ++j;
    runs.push_back({v[i], v[j - 1] + 1});
    i = j;
  }
  return runs;
}

// Runs back to indices; each run inside [0, limit), after the one before.
std::vector<int64_t> from_runs(const json& j, const char* name, int64_t limit, const std::string& origin) {
  const auto runs = field<std::vector<std::vector<int64_t>>>(j, name, origin);
  std::vector<int64_t> v;
  int64_t prev_end = 0;
  for (const auto& r : runs) {
    if (r.size() != 2 || r[0] < prev_end || r[1] <= r[0] || r[1] > limit)
      fail(origin, std::string("scale view '") + name + "' must be ascending [begin, end) runs within [0, " +
                       std::to_string(limit) + ")");
    for (int64_t x = r[0]; x < r[1]; ++x) v.push_back(x);
    prev_end = r[1];
  }
  return v;
}

}  // namespace

ScaleShape view_shape(const ScaleSpec& s, const ScaleView& v) {
  return {v.rows.empty() ? s.rows : int64_t(v.rows.size()), v.cols.empty() ? s.dim : int64_t(v.cols.size()),
          v.gates.empty() ? s.gates : int64_t(v.gates.size())};
}

json scale_to_json(const ScaleSpec& s, const ScaleView& v) {
  json j = {{"rows", s.rows},
            {"dim", s.dim},
            {"gates", s.gates},
            {"index_pattern", s.index_pattern},
            {"segment", s.segment},
            {"index_seed", s.index_seed},
            {"values", scale_values_name(s.values)},
            {"value_bound", s.value_bound},
            {"frac_bits", s.frac_bits},
            {"value_seed", s.value_seed},
            {"plan_kind", s.plan_kind},
            {"plan_seed", s.plan_seed},
            {"rung", s.rung}};
  json view = json::object();
  if (!v.rows.empty()) view["rows"] = runs_of(v.rows);
  if (!v.cols.empty()) view["cols"] = runs_of(v.cols);
  if (!v.gates.empty()) {
    view["gates"] = v.gates;
    // The kept gate most generated gates map to (every one, once all are
    // merged into one), then [generated gate, kept gate] for each other one.
    std::map<int64_t, int64_t> count;
    for (int64_t k : v.remap) ++count[k];
    int64_t mode = -1;
    for (const auto& [k, n] : count)
      if (n > count[mode]) mode = k;
    json remap = json::array();
    for (size_t g = 0; g < v.remap.size(); ++g)
      if (v.remap[g] != mode) remap.push_back({int64_t(g), v.remap[g]});
    view["remap_default"] = mode;
    view["remap"] = remap;
  }
  if (!v.all_batches) view["batches"] = v.batches;
  if (v.no_plan) view["no_plan"] = true;
  j["view"] = view;
  return j;
}

ScaleFileCase scale_from_json(const json& j, const OpSchema& op, const std::vector<double>& scalars, DType t,
                              int64_t rows, int64_t dim, int64_t gates, const std::string& origin) {
  if (!j.is_object()) fail(origin, "'scale' must be an object");
  ScaleFileCase f;
  ScaleSpec& s = f.spec;
  s.op = &op;
  s.scalars = scalars;
  s.dtype = t;
  s.rows = shape_field(j, "rows", origin);
  s.dim = shape_field(j, "dim", origin);
  s.gates = shape_field(j, "gates", origin);
  s.index_pattern = field<std::string>(j, "index_pattern", origin);
  s.segment = field<int64_t>(j, "segment", origin);
  s.index_seed = field<uint64_t>(j, "index_seed", origin);
  const std::string values = field<std::string>(j, "values", origin);
  if (!parse_scale_values(values, &s.values))
    fail(origin, "scale 'values' is '" + values + "', not exact, rounding or cancelling");
  s.value_bound = field<int32_t>(j, "value_bound", origin);
  s.frac_bits = field<int32_t>(j, "frac_bits", origin);
  s.value_seed = field<uint64_t>(j, "value_seed", origin);
  s.plan_kind = field<std::string>(j, "plan_kind", origin);
  s.plan_seed = field<uint64_t>(j, "plan_seed", origin);
  if (j.contains("rung")) s.rung = field<std::string>(j, "rung", origin);
  // The generated shape first: it bounds what the view may name.
  if (const std::string why = scale_spec_problem(s); !why.empty()) fail(origin, "scale: " + why);
  ScaleView& v = f.view;
  if (j.contains("view")) {
    const json& w = j.at("view");
    if (!w.is_object()) fail(origin, "scale 'view' must be an object");
    if (w.contains("rows")) v.rows = from_runs(w, "rows", s.rows, origin);
    if (w.contains("cols")) v.cols = from_runs(w, "cols", s.dim, origin);
    if (w.contains("gates") != w.contains("remap")) fail(origin, "scale view 'gates' and 'remap' go together");
    if (w.contains("gates")) {
      v.gates = field<std::vector<int64_t>>(w, "gates", origin);
      if (int64_t(v.gates.size()) > s.gates) fail(origin, "scale view keeps more gates than were generated");
      const int64_t def = w.contains("remap_default") ? field<int64_t>(w, "remap_default", origin) : -1;
      if (def < -1 || def >= int64_t(v.gates.size()))
        fail(origin, "scale view 'remap_default' is " + std::to_string(def) + ", not -1 or a kept gate");
      v.remap.assign(size_t(s.gates), def);
      for (const auto& pair : field<std::vector<std::vector<int64_t>>>(w, "remap", origin)) {
        if (pair.size() != 2 || pair[0] < 0 || pair[0] >= s.gates || pair[1] < -1 || pair[1] >= int64_t(v.gates.size()))
          fail(origin, "scale view 'remap' entries are [generated gate, kept gate or -1] pairs in range");
        v.remap[size_t(pair[0])] = pair[1];
      }
    }
    if (w.contains("batches")) {
      v.all_batches = false;
      v.batches = field<std::vector<int64_t>>(w, "batches", origin);
    }
    if (w.contains("no_plan")) v.no_plan = field<bool>(w, "no_plan", origin);
  }
  if (const std::string why = scale_spec_problem(s, v); !why.empty()) fail(origin, "scale: " + why);
  const ScaleShape shape = view_shape(s, v);
  if (shape.rows != rows || shape.dim != dim || shape.gates != gates)
    fail(origin, "rows, dim and gates (" + std::to_string(rows) + ", " + std::to_string(dim) + ", " +
                     std::to_string(gates) + ") are not the scale view's (" + std::to_string(shape.rows) + ", " +
                     std::to_string(shape.dim) + ", " + std::to_string(shape.gates) + ")");
  if (const std::string why = case_shape_problem(op, rows, dim, gates); !why.empty()) fail(origin, why);
  return f;
}

}  // namespace gatecheck
