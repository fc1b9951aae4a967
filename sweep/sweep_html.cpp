#include "sweep_html.h"

#include "../harness/run/split_runner.h"
#include "../properties/catalog/property_roles.h"
#include "json_path.h"
#include "sweep_fields.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <map>
#include <sstream>
#include <vector>

namespace gatecheck {

using nlohmann::json;

namespace {

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string num(double v, int digits = 4) {
  std::ostringstream s;
  s << std::setprecision(digits) << v;
  return s.str();
}

std::string show(const json& v) {
  if (v.is_null()) return "&ndash;";
  if (v.is_number_float()) return num(v.get<double>());
  if (v.is_string()) return esc(v.get<std::string>());
  return esc(v.dump());
}

std::vector<std::string> keys(const json* obj) { return keys_in_order({obj}); }

// A report can hold null where a fact was not known (an exported tree has no
// git commit or dirty flag), so fields are read by kind: a missing, null or
// mistyped field gives the fallback instead of throwing.
std::string text_of(const json& j, const char* k, const std::string& fallback = "") {
  if (!j.is_object()) return fallback;
  auto it = j.find(k);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}
bool flag_of(const json& j, const char* k) {
  if (!j.is_object()) return false;
  auto it = j.find(k);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}
double number_of(const json& j, const char* k, double fallback) {
  if (!j.is_object()) return fallback;
  auto it = j.find(k);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}
const json& field_of(const json& j, const char* k) {
  static const json null_value;
  if (!j.is_object()) return null_value;
  auto it = j.find(k);
  return it != j.end() ? *it : null_value;
}
// The tree's state beside its commit: unknown when the report could not tell.
std::string tree_state(const json& r) {
  const json& d = field_of(r, "tracked_tree_dirty");
  if (!d.is_boolean()) return " (tracked files: unknown)";
  return d.get<bool>() ? " (tracked files changed)" : "";
}

const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};

struct Series {
  std::string name, color;
  std::vector<std::pair<double, double>> points;  // (rows, value)
  bool dashed = false, hollow = false;
};

// A log-log line chart: x rows, y the value; decades as grid lines.
std::string chart(const std::string& title, const std::string& ylabel, const std::vector<Series>& series) {
  double x0 = 1e300, x1 = 0, y0 = 1e300, y1 = 0;
  for (const auto& s : series)
    for (auto [x, y] : s.points)
      if (x > 0 && y > 0 && std::isfinite(y)) {
        x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
      }
  std::ostringstream o;
  o << "<figure><figcaption>" << esc(title) << "</figcaption>";
  if (x1 <= 0) return o.str() + "<p>nothing measured</p></figure>";
  const double lx0 = std::floor(std::log10(x0) * 4) / 4 - 0.1, lx1 = std::ceil(std::log10(x1) * 4) / 4 + 0.1;
  const double ly0 = std::floor(std::log10(y0)), ly1 = std::max(ly0 + 1, std::ceil(std::log10(y1)));
  const int W = 640, H = 300, L = 70, R = 190, T = 12, B = 40;
  auto px = [&](double x) { return L + (std::log10(x) - lx0) / (lx1 - lx0) * (W - L - R); };
  auto py = [&](double y) { return T + (ly1 - std::log10(y)) / (ly1 - ly0) * (H - T - B); };
  o << "<svg width='" << W << "' height='" << H << "' role='img'>";
  o << "<rect x='" << L << "' y='" << T << "' width='" << W - L - R << "' height='" << H - T - B
    << "' fill='none' stroke='#999'/>";
  for (double d = ly0; d <= ly1 + 1e-9; d += 1) {
    const double y = py(std::pow(10, d));
    o << "<line x1='" << L << "' x2='" << W - R << "' y1='" << y << "' y2='" << y << "' stroke='#ddd'/>";
    o << "<text x='" << L - 6 << "' y='" << y + 4 << "' text-anchor='end' font-size='11'>1e" << int(d) << "</text>";
  }
  std::vector<double> xs;
  for (const auto& s : series)
    for (auto [x, y] : s.points) xs.push_back(x);
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  for (double x : xs)
    o << "<text x='" << px(x) << "' y='" << H - B + 16 << "' text-anchor='middle' font-size='11'>" << num(x, 6)
      << "</text>";
  o << "<text x='" << (L + W - R) / 2 << "' y='" << H - 6 << "' text-anchor='middle' font-size='12'>rows</text>";
  o << "<text x='14' y='" << (T + H - B) / 2 << "' transform='rotate(-90 14 " << (T + H - B) / 2
    << ")' text-anchor='middle' font-size='12'>" << esc(ylabel) << "</text>";
  int li = 0;
  for (const auto& s : series) {
    std::vector<std::pair<double, double>> pts;
    for (auto [x, y] : s.points)
      if (x > 0 && y > 0 && std::isfinite(y)) pts.push_back({px(x), py(y)});
    if (pts.empty()) continue;
    o << "<polyline fill='none' stroke='" << s.color << "' stroke-width='2'" << (s.dashed ? " stroke-dasharray='6 4'" : "")
      << " points='";
    for (auto [x, y] : pts) o << x << "," << y << " ";
    o << "'/>";
    for (auto [x, y] : pts)
      o << "<circle cx='" << x << "' cy='" << y << "' r='4' stroke='" << s.color << "' fill='"
        << (s.hollow ? "white" : s.color) << "'/>";
    const int ly = T + 14 + 16 * li++;
    o << "<line x1='" << W - R + 10 << "' x2='" << W - R + 34 << "' y1='" << ly - 4 << "' y2='" << ly - 4
      << "' stroke='" << s.color << "' stroke-width='2'" << (s.dashed ? " stroke-dasharray='6 4'" : "") << "/>";
    o << "<text x='" << W - R + 40 << "' y='" << ly << "' font-size='11'>" << esc(s.name) << "</text>";
  }
  o << "</svg></figure>";
  return o.str();
}

// The compared report's entry paired with ours, if any.
const json* theirs_for(const json& report, const std::string& label, std::string* their_name) {
  const json* cmp = json_at(report, {"compare", "pairs"});
  if (!cmp) return nullptr;
  for (const auto& p : *cmp)
    if (text_of(p, "ours") == label) {
      *their_name = text_of(p, "theirs");
      return &p;
    }
  return nullptr;
}

std::string verdict_cell(const std::string& word, const std::string& detail) {
  return "<td class='" + esc(word) + "'>" + esc(word) + (detail.empty() ? "" : "<br><small>" + detail + "</small>") +
         "</td>";
}

// How the parts were combined and, where a split differed, which split and
// the first element that differs.
std::string split_detail(const json& e) {
  const json* b = json_at(e, {"gatecheck", "split_invariance"});
  if (!b) return "";
  std::string d = "combined by " + esc(text_of(*b, "combine"));
  const json& f = field_of(*b, "first_failure");
  if (f.is_object()) {
    const json& sp = field_of(f, "split");
    const json& at = field_of(f, "element");
    char bits[64];
    std::snprintf(bits, sizeof bits, "0x%x vs 0x%x", unsigned(number_of(f, "bits", 0.0)),
                  unsigned(number_of(f, "full_batch_bits", 0.0)));
    d += "; first: " + esc(text_of(sp, "kind")) + " in " + show(field_of(sp, "parts")) + " parts, seed " +
         show(field_of(f, "seed")) + ", " + esc(text_of(f, "output")) + show(at) + " " + bits + " (full batch)";
  }
  return d;
}

}  // namespace

std::string sweep_html(const json& r) {
  std::ostringstream o;
  const json plain = value_at(r, {"results", "plain"});
  std::vector<std::string> impls;
  for (const auto& [k, v] : plain.items()) impls.push_back(k);
  const json env = value_at(r, {"environment"});
  // The op's outputs, from the catalog (a report of an op this build does not know: gate_residual's form).
  const OpSchema* found = find_op_schema(text_of(r, "op"));
  const OpSchema& op = found ? *found : gate_residual_schema();
  const std::string op_name = text_of(r, "op").empty() ? std::string(op.name) : text_of(r, "op");
  std::string summed;  // the outputs summed over rows, which params_repeatable compares
  for (const OpOutput& out : op.outputs)
    if (out.kind != OutputKind::rowwise) summed += (summed.empty() ? "" : ", ") + std::string(out.name);
  const std::string repeat_label = "params_repeatable: " + summed + " run to run";
  std::string reduced;  // the outputs reduced over rows, which split_invariance compares
  for (int k : row_reduction_outputs(op)) reduced += (reduced.empty() ? "" : ", ") + std::string(op.outputs[size_t(k)].name);
  const std::string split_label = "split_invariance (ours): " + reduced + " over ranks and micro-batches";
  o << "<!doctype html><html><head><meta charset='utf-8'><title>gatecheck sweep: " << esc(op_name) << "</title><style>"
       "body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px;color:#222}"
       "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;"
       "vertical-align:top}th{background:#f4f4f4}td.pass{background:#e3f5e1}td.fail{background:#f9d6d5}"
       "td.finding{background:#fdf0c8}small{color:#555}code{font-size:90%;word-break:break-all}"
       ".mark{color:#c00;font-weight:bold}figure{display:inline-block;margin:0 1em 1em 0}"
       "figcaption{font-weight:600;margin-bottom:4px}.meta{color:#444}</style></head><body>";
  o << "<h1>gatecheck sweep: " << esc(op_name) << "</h1>";
  o << "<p class='meta'>GPU " << show(value_at(env, {"gpu"})) << ", driver "
    << show(value_at(env, {"driver"})) << ", CUDA " << show(value_at(env, {"cuda"})) << ", LibTorch "
    << show(value_at(env, {"torch"})) << ", CPU " << show(value_at(env, {"cpu"})) << "<br>commit "
    << show(field_of(r, "commit")) << tree_state(r)
    << ", gatecheck " << show(field_of(r, "gatecheck_version")) << ", " << num(number_of(r, "seconds", 0.0), 3)
    << " s" << (flag_of(r, "interrupted") ? ", <b>interrupted</b>" : "") << "<br><code>"
    << esc(text_of(r, "command")) << "</code></p>";
  if (flag_of(r, "quick"))
    o << "<p><b>--quick</b>: " << esc(text_of(r, "quick_scaling")) << "</p>";
  const json g = value_at(r, {"grid"});
  auto gv = [&](const char* k) { return g.contains(k) ? show(g.at(k)) : std::string("&ndash;"); };
  o << "<p>Grid: " << gv("dtype") << ", dim " << gv("dim") << ", " << gv("gates") << " gates, seeds " << gv("seeds")
    << ", full batches " << gv("full_batches") << ", a " << gv("big_batch") << "-row batch against sub-batches of "
    << gv("sub_batch_sizes") << ", accuracy and latency at " << gv("accuracy_rows") << " rows x "
    << gv("accuracy_dim") << " (seed " << gv("accuracy_seed") << "), medians of " << gv("reps") << " after "
    << gv("warmup") << " warm-ups.</p>";

  // Verdicts, implementations as columns.
  o << "<h2>Verdicts</h2><p>pass; <b>fail</b>: a property the implementation claims failed; <b>finding</b>: one it "
       "does not claim failed (its contract is under its name).";
  if (r.contains("compare"))
    o << " Beside ours, the compared report's value for its paired row (" << esc(text_of(r["compare"], "against"))
      << "); <span class='mark'>*</span> where a verdict differs."
      << (text_of(r["compare"], "note").empty() ? "" : " Note: " + esc(text_of(r["compare"], "note")) + ".");
  o << "</p><table><tr><th>check</th>";
  for (const auto& i : impls) {
    std::string their;
    theirs_for(r, i, &their);
    o << "<th>" << esc(i) << (their.empty() ? "" : "<br><small>vs " + esc(their) + "</small>") << "<br><small>"
      << esc(plain[i].contains("gatecheck") ? text_of(plain[i]["gatecheck"], "contract") : "") << "</small></th>";
  }
  o << "</tr>";
  struct Row {
    const char* check;
    const char* label;
    const char* seed_field;  // the compared verdict, if the seed has one
  };
  const Row rows[] = {{"batch_invariant", "batch_invariant (the prior art's AND)", "batch_invariance.batch_invariant"},
                      {"all_rows", "all_rows: each row alone vs in full batches", nullptr},
                      {"params_repeatable", repeat_label.c_str(), "batch_invariance.params_repeatable"},
                      {"full_vs_sub_batches", "full_vs_sub_batches", nullptr},
                      {"batch_size_sweep", "batch_size_sweep", nullptr},
                      {"segment_invariance", "segment_invariance (ours)", nullptr},
                      {"split_invariance", split_label.c_str(), "batch_invariance.split_invariant"},
                      {"accuracy", "accuracy against the oracle's bounds (ours)", nullptr},
                      {"eager_exact", "eager_exact (ours)", nullptr}};
  for (const Row& row : rows) {
    o << "<tr><th>" << esc(row.label) << "</th>";
    for (const auto& i : impls) {
      const json& e = plain[i];
      if (e.contains("unavailable")) {
        o << "<td><small>unavailable: " << show(e["unavailable"]) << "</small></td>";
        continue;
      }
      const json* w = json_at(e, {"gatecheck", "verdicts", row.check});
      const std::string word = w && w->is_string() ? w->get<std::string>() : "?";
      std::string detail;
      const json* n = json_at(e, {"gatecheck", "failed_comparisons", row.check});
      if (n && n->is_number_integer()) detail = std::to_string(n->get<int64_t>()) + " failed";
      if (row.seed_field) {
        std::string their;
        if (const json* p = theirs_for(r, i, &their))
          for (const auto& f : field_of(*p, "fields"))
            if (text_of(f, "field") == row.seed_field)
              detail += (detail.empty() ? "" : "; ") + std::string("ours ") + show(field_of(f, "ours")) + ", theirs " +
                        show(field_of(f, "theirs")) + (flag_of(f, "differs") ? " <span class='mark'>*</span>" : "");
      }
      if (row.check == std::string(split_property().name)) {
        const std::string how = split_detail(e);
        detail += (detail.empty() || how.empty() ? "" : "; ") + how;
      }
      o << verdict_cell(word, detail);
    }
    o << "</tr>";
  }
  o << "</table>";
  for (const auto& i : impls)
    if (const json* err = json_at(plain[i], {"gatecheck", "error"}))
      o << "<p><b>" << esc(i) << "</b> stopped: " << show(*err) << "</p>";

  // The seed's fields, ours beside theirs.
  o << "<h2>The prior art's fields</h2><table><tr><th>field</th>";
  for (const auto& i : impls) o << "<th>" << esc(i) << "</th>";
  o << "</tr>";
  // Ours for every implementation; the compared report's beside ours where paired.
  std::vector<std::string> fields;
  std::map<std::string, std::map<std::string, std::string>> cells;
  for (const auto& i : impls) {
    const json& e = plain[i];
    auto put = [&](const std::string& name, const json* v) {
      if (!v) return;
      if (std::find(fields.begin(), fields.end(), name) == fields.end()) fields.push_back(name);
      cells[name][i] = show(*v);
    };
    const json* all = json_at(e, {"batch_invariance", "all_rows"});
    for (const auto& n : keys(all))
      for (const char* k : {"rows", "fwd_differ", "rowgrad_differ"})
        put("batch_invariance.all_rows." + n + "." + k, json_at(*all, {n, k}));
    put("batch_invariance.params_repeatable", json_at(e, {"batch_invariance", "params_repeatable"}));
    put("batch_invariance.split_invariant", json_at(e, {"batch_invariance", "split_invariant"}));
    for (const char* k : {"sub_batches", "fwd_differ", "rowgrad_differ"})
      put(std::string("batch_invariance.full_vs_sub_batches.") + k, json_at(e, {"batch_invariance", "full_vs_sub_batches", k}));
    for (const char* k : {"comparisons", "differ"})
      put(std::string("batch_invariance.batch_size_sweep.") + k, json_at(e, {"batch_invariance", "batch_size_sweep", k}));
    put("batch_invariance.batch_invariant", json_at(e, {"batch_invariance", "batch_invariant"}));
    const json* acc = json_at(e, {"accuracy_latency"});
    for (const auto& n : keys(acc)) {
      const json& a = acc->at(n);
      put("accuracy_latency." + n + ".fwd_rel_err", json_at(a, {"fwd_rel_err"}));
      for (const SeedField& k : seed_grad_fields(op))
        put("accuracy_latency." + n + ".grad_rel_err." + k.key, json_at(a, {"grad_rel_err", k.key}));
      put("accuracy_latency." + n + ".fwd_us", json_at(a, {"fwd_us"}));
      put("accuracy_latency." + n + ".fwd_bwd_us", json_at(a, {"fwd_bwd_us"}));
    }
    // An operator report's fields (sweep_operator_report.h), named as the comparison names them.
    if (const json* rep = json_at(e, {"operator_report"})) {
      for (const char* k : {"rows_batch_invariant", "repeat_bitwise_equal"})
        put(std::string("operator_report.") + k, json_at(*rep, {k}));
      if (const json* eq = json_at(*rep, {"bitwise_vs_eager_model"}))
        for (const auto& [k, v] : eq->items()) put("operator_report.bitwise_vs_eager_model." + k, &v);
      if (op.plain.field) {
        const std::string f = op.plain.field;
        put("operator_report." + f, json_at(*rep, {f}));
        if (const json* sizes = json_at(*rep, {f + "_by_size"}))
          for (const json& p : *sizes) put("operator_report." + f + "." + text_of(p, "case") + ".differ", json_at(p, {"differ"}));
      }
      if (const json* rel = json_at(*rep, {"rel_error"}))
        for (const auto& [k, v] : rel->items()) put("rel_error." + k, &v);
      if (const json* perf = json_at(*rep, {"perf"}))
        for (const json& p : *perf)
          for (const char* k : {"fwd_us", "fwd_gbps", "backward_us", "backward_gbps"})
            put("operator_report.perf." + text_of(p, "case") + "." + k, json_at(p, {k}));
    }
    std::string their;
    if (const json* p = theirs_for(r, i, &their))
      for (const auto& f : field_of(*p, "fields")) {
        const std::string name = text_of(f, "field");
        if (text_of(f, "kind") == "verdict" && name.find(' ') != std::string::npos) continue;  // derived
        if (std::find(fields.begin(), fields.end(), name) == fields.end()) fields.push_back(name);
        std::string& c = cells[name][i];
        if (c.empty()) c = show(field_of(f, "ours"));  // a field the comparison names its own way (perf.S=4097.us)
        c += " <small>/ " + show(field_of(f, "theirs")) + "</small>";
        if (flag_of(f, "differs")) c += " <span class='mark'>*</span>";
      }
  }
  if (r.contains("compare"))
    o << "<tr><td colspan='" << impls.size() + 1 << "'><small>ours / the compared report's, where paired</small></td></tr>";
  for (const auto& f : fields) {
    o << "<tr><th><small>" << esc(f) << "</small></th>";
    for (const auto& i : impls) o << "<td>" << (cells[f].count(i) ? cells[f][i] : "&ndash;") << "</td>";
    o << "</tr>";
  }
  o << "</table>";

  // Charts: latency and error against rows.
  auto series_of = [&](const std::function<double(const json&, const std::string&)>& ours_at,
                       const std::function<double(const json&, const std::string&)>& theirs_at) {
    std::vector<Series> s;
    int c = 0;
    for (const auto& i : impls) {
      const json& e = plain[i];
      if (e.contains("unavailable")) continue;
      Series mine{i, kColors[c++ % 8], {}, false, false};
      for (const auto& n : keys(json_at(e, {"accuracy_latency"}))) mine.points.push_back({std::stod(n), ours_at(e, n)});
      s.push_back(mine);
      std::string their;
      if (theirs_at && theirs_for(r, i, &their)) {
        const json* t = json_at(r, {"compare", "theirs_raw", their});
        if (t && t->contains("accuracy_latency")) {
          Series other{their + " (compared)", mine.color, {}, true, true};
          for (const auto& n : keys(json_at(*t, {"accuracy_latency"}))) other.points.push_back({std::stod(n), theirs_at(*t, n)});
          s.push_back(other);
        }
      }
    }
    return s;
  };
  auto seed_num = [](const char* field) {
    return [field](const json& e, const std::string& n) {
      const json* v = json_at(e, {"accuracy_latency", n, field});
      return v && v->is_number() ? v->get<double>() : -1.0;
    };
  };
  auto ours_timing = [](const char* call, const char* fig) {
    return [call, fig](const json& e, const std::string& n) {
      const json* v = json_at(e, {"gatecheck", "latency", n, call, fig});
      return v && v->is_number() ? v->get<double>() : -1.0;
    };
  };
  auto grad_err = [](const std::string& key) {
    return [key](const json& e, const std::string& n) {
      const json* v = json_at(e, {"accuracy_latency", n, "grad_rel_err", key});
      return v && v->is_number() ? v->get<double>() : -1.0;
    };
  };
  o << "<h2>Latency and error against rows</h2><p>Latency: the prior art's method (CUDA events around each call; "
       "on the CPU the wall clock), medians; dashed, hollow: the compared report. The copy of the same bytes and the "
       "other two timings are in the table below.</p>";
  o << chart("forward + backward, us", "microseconds", series_of(seed_num("fwd_bwd_us"), seed_num("fwd_bwd_us")));
  o << chart("forward, us", "microseconds", series_of(seed_num("fwd_us"), seed_num("fwd_us")));
  // The error of each output summed over rows (reductions are where orders differ).
  for (const SeedField& k : seed_grad_fields(op))
    if (op.outputs[k.output].kind != OutputKind::rowwise)
      o << chart(std::string(op.outputs[k.output].name) + " error (max |err| / max |value|)", "relative error",
                 series_of(grad_err(k.key), grad_err(k.key)));
  const int fwd = seed_forward_output(op);
  o << chart(std::string(fwd >= 0 ? op.outputs[size_t(fwd)].name : "forward") + " error (max |err| / max |value|)",
             "relative error",
             series_of(seed_num("fwd_rel_err"), seed_num("fwd_rel_err")));
  o << chart("forward + backward, wall clock per call, us", "microseconds",
             series_of(ours_timing("fwd_bwd", "wall_us"), nullptr));

  // Every timing beside its copy.
  o << "<h2>Timings beside a copy of the same bytes</h2><table><tr><th>implementation</th><th>rows</th><th>call</th>"
       "<th>event_us</th><th>gpu_us</th><th>wall_us</th><th>copy event / gpu / wall us</th><th>GPU-only method</th></tr>";
  for (const auto& i : impls)
    for (const auto& n : keys(json_at(plain[i], {"gatecheck", "latency"})))
        for (const char* call : {"fwd", "fwd_bwd", "bwd"}) {
          if (!plain[i]["gatecheck"]["latency"][n].contains(call)) continue;
          const json& t = plain[i]["gatecheck"]["latency"][n][call];
          o << "<tr><td>" << esc(i) << "</td><td>" << esc(n) << "</td><td>" << call << "</td><td>"
            << show(t["event_us"]) << "</td><td>" << show(t["gpu_us"]) << "</td><td>" << show(t["wall_us"])
            << "</td><td>" << show(t["copy_event_us"]) << " / " << show(t["copy_gpu_us"]) << " / "
            << show(t["copy_wall_us"]) << "</td><td><small>" << show(t["gpu_method"]) << "</small></td></tr>";
        }
  o << "</table><ul>";
  for (const auto& [k, v] : value_at(r, {"timing"}).items()) o << "<li><b>" << esc(k) << "</b>: " << show(v) << "</li>";
  o << "</ul>";

  // Accuracy in ulps and against the bounds.
  o << "<h2>Accuracy against the oracle (ours)</h2><table><tr><th>implementation</th><th>rows</th><th>output</th>"
       "<th>verdict</th><th>outside bound</th><th>max |err|/bound</th><th>max ulps</th><th>rel err</th>"
       "<th>differs from eager</th></tr>";
  for (const auto& i : impls)
    for (const auto& n : keys(json_at(plain[i], {"gatecheck", "accuracy"})))
        for (const auto& [out, x] : plain[i]["gatecheck"]["accuracy"][n]["outputs"].items())
          o << "<tr><td>" << esc(i) << "</td><td>" << esc(n) << "</td><td>" << esc(out) << "</td>"
            << verdict_cell(text_of(x, "verdict", "?"), "") << "<td>" << show(field_of(x, "outside_bound")) << " of "
            << show(field_of(x, "elements")) << "</td><td>" << show(field_of(x, "max_err_over_bound")) << "</td><td>"
            << show(field_of(x, "max_ulps")) << "</td><td>" << show(field_of(x, "rel_err")) << "</td><td>" << show(field_of(x, "eager_differ"))
            << "</td></tr>";
  o << "</table>";

  // Failures and their repro commands.
  o << "<h2>Failed comparisons and their repro commands</h2>";
  bool any = false;
  for (const auto& i : impls) {
    const json* fs = json_at(plain[i], {"gatecheck", "failures"});
    if (!fs || fs->empty()) continue;
    any = true;
    o << "<h3>" << esc(i) << "</h3><p>failed comparisons: " << show(value_at(plain[i], {"gatecheck", "failed_comparisons"}))
      << "; the first of each check:</p><ul>";
    for (const auto& f : *fs) {
      o << "<li><b>" << esc(text_of(f, "check")) << "</b> (" << esc(text_of(f, "verdict")) << ", seed "
        << show(field_of(f, "seed")) << "): " << esc(text_of(f, "detail"));
      if (!text_of(f, "repro").empty()) o << "<br><code>" << esc(text_of(f, "repro")) << "</code>";
      o << "<br><small>" << esc(text_of(f, "replay_note")) << "</small></li>";
    }
    o << "</ul>";
  }
  if (!any) o << "<p>None.</p>";
  o << "</body></html>\n";
  return o.str();
}

}  // namespace gatecheck
