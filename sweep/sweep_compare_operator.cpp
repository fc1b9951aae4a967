// --compare against an operator report (RL-Kernel's h3_operator_report, as
// bench/reference/h3_rmsnorm_b200.json): its accuracy verdicts, each
// implementation's backward repeatability and per-output errors, and its perf
// rows by size, beside ours (sweep_operator_report.h). Output names are read
// from their report's keys and the op catalog, never spelled here.
#include <set>
#include <string>
#include <utility>

#include "json_path.h"
#include "sweep_compare.h"
#include "sweep_compare_fields.h"
#include "sweep_fields.h"
#include "sweep_peer_role.h"

namespace gatecheck {

using nlohmann::json;
using compare_detail::Fields;

namespace {

// Their two rows: the candidate kernel ("cuda", perf fields candidate_*) and
// torch eager ("provider", provider_*).
struct TheirRow {
  const char* name;
  const char* perf_prefix;
  const char* paired_as;
};
const TheirRow kCandidate{"cuda", "candidate_", "a CUDA kernel made for this op, as the operator report's candidate"};
const TheirRow kProvider{"provider", "provider_", "torch eager, as the operator report's provider"};

const TheirRow* their_row_for(const std::string& spec) {
  switch (peer_role(spec)) {
    case PeerRole::eager: return &kProvider;
    case PeerRole::kernels: return &kCandidate;
    case PeerRole::none: break;
  }
  return nullptr;
}

json compare_one(const json& e, const json& theirs, const TheirRow& row, const OpSchema& op, bool same_grid) {
  Fields f;
  const json* ours = json_at(e, {"operator_report"});
  auto mine = [&](const std::vector<std::string>& p) { return ours ? json_at(*ours, p) : nullptr; };
  // Their accuracy verdicts are the candidate's: rows_batch_invariant, and
  // each bitwise comparison (ours: the forward output against the eager
  // model; the plain part against its library op, where the op has one, one
  // comparison beside each of their per-weight ones). A field we do not
  // compute, or could not here (null), shows as not computed.
  if (&row == &kCandidate)
    if (const json* acc = json_at(theirs, {"accuracy"}))
      for (const auto& [k, v] : acc->items()) {
        if (k == "backward") continue;
        const int fwd = seed_forward_output(op);
        const json* our = k == "rows_batch_invariant" ? mine({"rows_batch_invariant"})
                          : k.find("bitwise_vs_diffusers") != std::string::npos && fwd >= 0
                              ? mine({"bitwise_vs_eager_model", op.outputs[size_t(fwd)].name})
                          : op.plain.field && k == op.plain.field ? mine({k})
                                                                  : nullptr;
        if (our && our->is_null()) our = nullptr;
        if (v.is_object())
          for (const auto& [kk, vv] : v.items())
            f.verdict("accuracy." + k + "." + kk + (our ? "" : " (ours: not computed)"), our, &vv);
        else
          f.verdict("accuracy." + k, our, &v);
      }
  f.verdict("accuracy.backward." + std::string(row.name) + ".repeat_bitwise_equal", mine({"repeat_bitwise_equal"}),
            json_at(theirs, {"accuracy", "backward", row.name, "repeat_bitwise_equal"}));
  // Errors against float64, by their keys (the outputs' names), and ours for
  // each output they do not list.
  std::set<std::string> listed;
  if (const json* rel = json_at(theirs, {"accuracy", "backward", row.name, "rel_error"}))
    for (const auto& [k, v] : rel->items()) {
      listed.insert(k);
      f.value("rel_error." + k, mine({"rel_error", k}), &v);
    }
  for (const OpOutput& o : op.outputs)
    if (!listed.count(o.name)) f.value(std::string("rel_error.") + o.name, mine({"rel_error", o.name}), nullptr);
  // Perf by size: the same S where both grids have it, else the i-th size of each.
  const json* perf = json_at(theirs, {"perf"});
  const json* our_perf = mine({"perf"});
  for (size_t i = 0; perf && perf->is_array() && i < perf->size(); ++i) {
    const json& t = (*perf)[i];
    const std::string cs = t.value("case", "?");
    const json* o = nullptr;
    if (our_perf && our_perf->is_array()) {
      for (const json& x : *our_perf)
        if (x.value("case", "") == cs) o = &x;
      if (!o && !same_grid && i < our_perf->size()) o = &(*our_perf)[i];
    }
    const std::string ours_case = o ? o->value("case", "") : cs;
    const std::string at = "perf." + cs + (ours_case != cs ? " (ours: " + ours_case + ")" : "");
    const std::string pre = row.perf_prefix;
    auto ours_at = [&](const char* k) { return o ? json_at(*o, {k}) : nullptr; };
    f.value(at + ".bytes", ours_at("bytes"), json_at(t, {"bytes"}));
    f.value(at + ".us", ours_at("fwd_us"), json_at(t, {pre + "us"}));
    f.value(at + ".gbps", ours_at("fwd_gbps"), json_at(t, {pre + "gbps"}));
    f.value(at + ".backward_us", ours_at("backward_us"), json_at(t, {pre + "backward_us"}));
    f.value(at + ".backward_gbps", ours_at("backward_gbps"), json_at(t, {pre + "backward_gbps"}));
    // Peak memory we do not measure shows so by name (the report's peak_mib says why).
    for (const auto& [k, theirs_k] : {std::pair<const char*, std::string>{"fwd_peak_mib", pre + "peak_mib"},
                                      {"backward_peak_mib", pre + "backward_peak_mib"}}) {
      const json* v = ours_at(k);
      const std::string name = at + "." + (theirs_k.c_str() + pre.size());
      f.value(v && !v->is_null() ? name : name + " (ours: not measured)", v && !v->is_null() ? v : nullptr,
              json_at(t, {theirs_k}));
    }
  }
  return {{"fields", f.rows}, {"verdicts_differ", f.verdicts_differ}};
}

}  // namespace

json compare_operator_report(const json& ours, const json& theirs, const std::string& their_path, const OpSchema& op) {
  json c;
  c["against"] = their_path;
  c["their_kind"] = theirs.value("kind", "");
  c["their_op"] = theirs.value("op", "");
  c["their_environment"] = theirs.contains("environment") ? theirs["environment"] : json(nullptr);
  c["their_quick"] = false;
  // Their sizes are the op's full grid's (prior_art_rows).
  const bool same_grid = !ours.value("quick", false);
  // Their backward_gbps divides the case's one `bytes` (the forward's) by the backward's time;
  // ours divides the backward's own bytes (backward_bytes), so the two differ by that ratio too.
  std::string note = "their backward_gbps is their bytes (the forward's) over the backward's time; ours is the "
                     "backward's own bytes (backward_bytes in our report) over it";
  if (!same_grid)
    note = "the grids differ (ours --quick, theirs full): each of their sizes is beside our size in the same "
           "place, and only the verdicts compare; " + note;
  c["note"] = note;
  const json* mine = json_at(ours, {"results", "plain"});
  json pairs = json::array(), unpaired = json::array();
  std::set<std::string> used;
  int differ = 0;
  if (mine)
    for (const auto& [label, e] : mine->items()) {
      if (e.contains("unavailable")) continue;
      const TheirRow* row = their_row_for(e.value("spec", label));
      if (!row || !json_at(theirs, {"accuracy", "backward", row->name})) {
        unpaired.push_back(label);
        continue;
      }
      used.insert(row->name);
      json p = compare_one(e, theirs, *row, op, same_grid);
      p["ours"] = label;
      p["theirs"] = row->name;
      p["paired_as"] = row->paired_as;
      differ += p["verdicts_differ"].get<int>();
      pairs.push_back(p);
    }
  json theirs_left = json::array();
  for (const TheirRow* r : {&kCandidate, &kProvider})
    if (!used.count(r->name) && json_at(theirs, {"accuracy", "backward", r->name})) theirs_left.push_back(r->name);
  c["theirs_raw"] = json::object();  // (their perf is by S, in their own form: no charts)
  c["pairs"] = pairs;
  c["ours_unpaired"] = unpaired;
  c["theirs_unpaired"] = theirs_left;
  c["verdicts_differ"] = differ;
  return c;
}

}  // namespace gatecheck
