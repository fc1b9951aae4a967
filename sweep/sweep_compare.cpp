#include "sweep_compare.h"

#include "json_path.h"
#include "sweep_compare_fields.h"
#include "sweep_fields.h"
#include "sweep_peer_role.h"
#include "../kernels/op_schema.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <iomanip>
#include <sstream>

namespace gatecheck {

using nlohmann::json;
using compare_detail::Fields;

namespace {

// What the seed's two rows are, for pairing.
std::string seed_row_for(const std::string& spec) {
  switch (peer_role(spec)) {
    case PeerRole::eager: return "diffusers";
    case PeerRole::kernels: return "rl_kernel";
    case PeerRole::none: break;
  }
  return "";
}

// The keys of the object at `path` on either side, so that neither side's sizes are left out.
std::vector<std::string> keys_of(const json& a, const json& b, const std::vector<std::string>& path) {
  return keys_in_order({json_at(a, path), json_at(b, path)});
}

json compare_pair(const json& a, const json& b, const OpSchema& op) {
  Fields f;
  auto both = [&](const std::vector<std::string>& p) { return std::make_pair(json_at(a, p), json_at(b, p)); };
  for (const std::string& n : keys_of(a, b, {"batch_invariance", "all_rows"}))
      for (const char* k : {"fwd_differ", "rowgrad_differ"}) {
        const auto [x, y] = both({"batch_invariance", "all_rows", n, k});
        f.count("batch_invariance.all_rows." + n + "." + k, x, y);
      }
  {
    const auto [x, y] = both({"batch_invariance", "params_repeatable"});
    f.verdict("batch_invariance.params_repeatable", x, y);
    const auto [u, w] = both({"batch_invariance", "split_invariant"});
    f.verdict("batch_invariance.split_invariant", u, w);
  }
  for (const char* k : {"sub_batches", "fwd_differ", "rowgrad_differ"}) {
    const auto [x, y] = both({"batch_invariance", "full_vs_sub_batches", k});
    if (std::string(k) == "sub_batches") f.value(std::string("batch_invariance.full_vs_sub_batches.") + k, x, y);
    else f.count(std::string("batch_invariance.full_vs_sub_batches.") + k, x, y);
  }
  {
    const auto [x, y] = both({"batch_invariance", "batch_size_sweep", "comparisons"});
    f.value("batch_invariance.batch_size_sweep.comparisons", x, y);
    const auto [d, e] = both({"batch_invariance", "batch_size_sweep", "differ"});
    f.count("batch_invariance.batch_size_sweep.differ", d, e);
    const auto [v, w] = both({"batch_invariance", "batch_invariant"});
    f.verdict("batch_invariance.batch_invariant", v, w);
  }
  for (const std::string& rows : keys_of(a, b, {"accuracy_latency"})) {
      const std::string p = "accuracy_latency." + rows;
      const auto [x, y] = both({"accuracy_latency", rows, "fwd_rel_err"});
      f.error(p + ".fwd_rel_err", x, y);
      for (const SeedField& g : seed_grad_fields(op)) {
        const auto [u, v] = both({"accuracy_latency", rows, "grad_rel_err", g.key});
        f.error(p + ".grad_rel_err." + g.key, u, v);
      }
      for (const char* t : {"fwd_us", "fwd_bwd_us"}) {
        const auto [u, v] = both({"accuracy_latency", rows, t});
        f.value(p + "." + t, u, v);
      }
    }
  return {{"fields", f.rows}, {"verdicts_differ", f.verdicts_differ}};
}

}  // namespace

json compare_reports(const json& ours, const json& theirs, const std::string& their_path) {
  const OpSchema* op = find_op_schema(ours.value("op", std::string(gate_residual_schema().name)));
  if (!op) op = &gate_residual_schema();
  if (theirs.value("kind", "") == kOperatorReportKind) return compare_operator_report(ours, theirs, their_path, *op);
  json c;
  c["against"] = their_path;
  c["their_kind"] = theirs.value("kind", "");
  c["their_environment"] = theirs.contains("environment") ? theirs["environment"] : json(nullptr);
  c["their_quick"] = theirs.value("quick", false);
  if (ours.value("quick", false) != theirs.value("quick", false))
    c["note"] = std::string("the grids differ (ours ") + (ours.value("quick", false) ? "--quick" : "full") +
                ", theirs " + (theirs.value("quick", false) ? "--quick" : "full") +
                "): their counts and sizes are not ours, and only the verdicts compare";
  const json* mine = json_at(ours, {"results", "plain"});
  const json* other = json_at(theirs, {"results", "plain"});
  json pairs = json::array(), unpaired = json::array();
  std::set<std::string> used;
  int differ = 0;
  if (mine && other)
    for (const auto& [label, e] : mine->items()) {
      if (e.contains("unavailable")) continue;
      const std::string spec = e.value("spec", label);
      std::string name, why;
      if (other->contains(label)) {
        name = label;
        why = "the same implementation";
      } else if (const std::string s = seed_row_for(spec); !s.empty() && other->contains(s)) {
        name = s;
        why = s == "diffusers" ? "torch eager, as the prior art's diffusers row"
                               : "a CUDA kernel made for this op, as the prior art's rl_kernel row";
      }
      if (name.empty() || other->at(name).contains("unavailable")) {
        unpaired.push_back(label);
        continue;
      }
      used.insert(name);
      json p = compare_pair(e, other->at(name), *op);
      p["ours"] = label;
      p["theirs"] = name;
      p["paired_as"] = why;
      differ += p["verdicts_differ"].get<int>();
      pairs.push_back(p);
    }
  // Their figures against rows, for the page's charts.
  json raw = json::object();
  for (const auto& name : used)
    if (other->at(name).contains("accuracy_latency"))
      raw[name] = {{"accuracy_latency", other->at(name)["accuracy_latency"]}};
  c["theirs_raw"] = raw;
  json theirs_left = json::array();
  if (other)
    for (const auto& [name, _] : other->items())
      if (!used.count(name)) theirs_left.push_back(name);
  c["pairs"] = pairs;
  c["ours_unpaired"] = unpaired;
  c["theirs_unpaired"] = theirs_left;
  c["verdicts_differ"] = differ;
  return c;
}

void print_comparison(std::ostream& os, const json& cmp) {
  os << "\ncompared with " << cmp.value("against", "") << " (" << cmp.value("their_kind", "") << ", GPU "
     << (cmp["their_environment"].is_object() && cmp["their_environment"].contains("gpu")
             ? cmp["their_environment"]["gpu"].dump()
             : "null")
     << "): " << cmp.value("verdicts_differ", 0) << " verdict(s) differ, marked *\n";
  if (cmp.contains("note")) os << "  note: " << cmp["note"].get<std::string>() << "\n";
  auto cell = [](const json& v) {
    if (v.is_null()) return std::string("-");
    if (v.is_number_float()) {
      std::ostringstream s;
      s << std::setprecision(4) << v.get<double>();
      return s.str();
    }
    return v.dump();
  };
  for (const auto& p : cmp["pairs"]) {
    os << "  " << p.value("ours", "") << " vs " << p.value("theirs", "") << " (" << p.value("paired_as", "") << ")\n";
    for (const auto& f : p["fields"]) {
      os << "    " << (f.value("differs", false) ? "* " : "  ") << std::left << std::setw(64) << f.value("field", "")
         << std::right << std::setw(12) << cell(f["ours"]) << std::setw(12) << cell(f["theirs"]);
      if (f.contains("theirs_over_ours")) os << "   x" << std::setprecision(3) << f["theirs_over_ours"].get<double>();
      os << "\n";
    }
  }
  for (const auto& u : cmp["ours_unpaired"]) os << "  " << u.get<std::string>() << ": nothing to compare with\n";
}

}  // namespace gatecheck
