#include "sweep_schema.h"

#include "sweep_fields.h"
#include "sweep_grid.h"

namespace gatecheck {

using nlohmann::json;

namespace {

class Checker {
 public:
  std::vector<std::string> problems;

  void say(const std::string& path, const std::string& what) { problems.push_back(path + ": " + what); }

  // j[key] as an object, array, ... or nullptr (and a problem) when it is not.
  const json* member(const json& j, const std::string& path, const char* key, json::value_t want) {
    const std::string at = path.empty() ? key : path + "." + key;
    if (!j.is_object() || !j.contains(key)) {
      say(at, "missing");
      return nullptr;
    }
    const json& v = j.at(key);
    const bool ok = want == json::value_t::number_float ? v.is_number()
                    : want == json::value_t::number_unsigned ? v.is_number_integer() && v.get<int64_t>() >= 0
                                                             : v.type() == want;
    if (!ok) {
      say(at, std::string("is ") + v.type_name() + ", not " + json(want).type_name());
      return nullptr;
    }
    return &v;
  }
  const json* object(const json& j, const std::string& p, const char* k) { return member(j, p, k, json::value_t::object); }
  const json* count(const json& j, const std::string& p, const char* k) {
    return member(j, p, k, json::value_t::number_unsigned);
  }
  const json* number(const json& j, const std::string& p, const char* k) {
    if (j.is_object() && j.contains(k) && j.at(k).is_null()) return &j.at(k);  // not measured (no GPU, CPU-only)
    return member(j, p, k, json::value_t::number_float);
  }
  const json* boolean(const json& j, const std::string& p, const char* k) { return member(j, p, k, json::value_t::boolean); }

  template <class T>
  void equal(const json* v, const std::string& path, const T& want, const char* why) {
    if (!v) return;
    if (*v != json(want)) say(path, "is " + v->dump() + ", the grid gives " + json(want).dump() + " (" + why + ")");
  }
  void at_most(const json* v, const std::string& path, int64_t limit, const char* of) {
    if (v && v->get<int64_t>() > limit)
      say(path, "is " + v->dump() + ", more than the " + std::to_string(limit) + " " + of);
  }

  // The operator report's block (sweep_operator_report.h), for an op whose prior art has one.
  void operator_report(const json& e, const std::string& p, const SweepGrid& g) {
    const std::string o = p + ".operator_report";
    const json* r = object(e, p, "operator_report");
    if (!r) return;
    boolean(*r, o, "rows_batch_invariant");
    boolean(*r, o, "repeat_bitwise_equal");
    if (const json* rel = object(*r, o, "rel_error"))
      for (const OpOutput& out : g.op->outputs) number(*rel, o + ".rel_error", out.name);
    const json* perf = member(*r, o, "perf", json::value_t::array);
    if (perf && perf->size() != g.accuracy_rows.size())
      say(o + ".perf", "has " + std::to_string(perf->size()) + " sizes, the grid " +
                           std::to_string(g.accuracy_rows.size()));
    for (size_t i = 0; perf && i < perf->size() && i < g.accuracy_rows.size(); ++i) {
      const std::string at = o + ".perf[" + std::to_string(i) + "]";
      equal(count((*perf)[i], at, "rows"), at + ".rows", g.accuracy_rows[i], "the accuracy and latency sizes");
      for (const char* k : {"fwd_us", "backward_us"}) number((*perf)[i], at, k);
    }
    if (g.op->plain.field) plain_part(*r, o, g);
  }

  // The plain part against its library op (sweep_plain.h): true or false, or
  // null with its reason; each size's counts, and the verdict their AND.
  void plain_part(const json& r, const std::string& o, const SweepGrid& g) {
    const std::string f = g.op->plain.field;
    const std::string note = f + "_note", by = f + "_by_size";
    const json* v = r.is_object() && r.contains(f) && r.at(f).is_null() ? &r.at(f) : boolean(r, o, f.c_str());
    member(r, o, note.c_str(), json::value_t::string);
    const json* sizes = member(r, o, by.c_str(), json::value_t::array);
    if (!sizes) return;
    if (sizes->size() != g.accuracy_rows.size())
      say(o + "." + by, "has " + std::to_string(sizes->size()) + " sizes, the grid " +
                            std::to_string(g.accuracy_rows.size()));
    bool all_equal = sizes->size() == g.accuracy_rows.size(), any_differ = false;
    for (size_t i = 0; i < sizes->size(); ++i) {
      const std::string at = o + "." + by + "[" + std::to_string(i) + "]";
      const json& e = (*sizes)[i];
      if (i < g.accuracy_rows.size())
        equal(count(e, at, "rows"), at + ".rows", g.accuracy_rows[i], "the accuracy and latency sizes");
      const bool compared = e.is_object() && e.contains("differ") && !e.at("differ").is_null();
      const json* d = compared ? count(e, at, "differ") : nullptr;
      const json* n = compared ? count(e, at, "elements") : nullptr;
      if (d && n) at_most(d, at + ".differ", n->get<int64_t>(), "elements");
      all_equal = all_equal && d && d->get<int64_t>() == 0;
      any_differ = any_differ || (d && d->get<int64_t>() > 0);
    }
    if (!v) return;
    const json want = any_differ ? json(false) : all_equal ? json(true) : json(nullptr);
    if (*v != want)
      say(o + "." + f, "is " + v->dump() + ", but its sizes' counts give " + want.dump() +
                           " (true: every size compared and none differs)");
  }

  // gatecheck's split_invariant beside params_repeatable (a report of ours
  // has it; the prior art's has not): true, false, or null where nothing was
  // split; when false, gatecheck.split_invariance names the split and the
  // first differing element.
  void split_invariance(const json& e, const std::string& p, const json* inv) {
    const bool ours = e.is_object() && e.contains("gatecheck");
    if (!inv || (!ours && !inv->contains("split_invariant"))) return;
    const std::string bi = p + ".batch_invariance";
    const json* si = inv->contains("split_invariant") && inv->at("split_invariant").is_null()
                         ? &inv->at("split_invariant")
                         : boolean(*inv, bi, "split_invariant");
    if (!ours || !si) return;
    const std::string gp = p + ".gatecheck", sp = gp + ".split_invariance";
    const json* g = object(e, p, "gatecheck");
    const json* b = g ? object(*g, gp, "split_invariance") : nullptr;
    if (!b) return;
    if (!b->contains("invariant") || b->at("invariant") != *si)
      say(sp + ".invariant", "is " + (b->contains("invariant") ? b->at("invariant").dump() : std::string("missing")) +
                                 ", but batch_invariance.split_invariant is " + si->dump());
    const json* n = count(*b, sp, "splits");
    const json* failed = count(*b, sp, "splits_failed");
    if (n) at_most(failed, sp + ".splits_failed", n->get<int64_t>(), "splits");
    if (failed && si->is_boolean() && si->get<bool>() != (failed->get<int64_t>() == 0))
      say(bi + ".split_invariant", "is " + si->dump() + ", but " + failed->dump() + " splits failed");
    const bool clean = !si->is_boolean() || si->get<bool>();
    if (!b->contains("first_failure")) return say(sp + ".first_failure", "missing");
    const json& f = b->at("first_failure");
    if (clean) {
      if (!f.is_null()) say(sp + ".first_failure", "is set, but no split failed");
      return;
    }
    if (!f.is_object()) return say(sp + ".first_failure", "is " + std::string(f.type_name()) + ", not the failed split");
    const std::string fp = sp + ".first_failure";
    if (const json* split = object(f, fp, "split")) {
      member(*split, fp + ".split", "kind", json::value_t::string);
      count(*split, fp + ".split", "parts");
      member(*split, fp + ".split", "part_rows", json::value_t::array);
    }
    member(f, fp, "output", json::value_t::string);
    const json* at = member(f, fp, "element", json::value_t::array);
    if (at && at->size() != 2) say(fp + ".element", "is " + at->dump() + ", not [row, column]");
    count(f, fp, "bits");
    count(f, fp, "full_batch_bits");
  }

  void implementation(const json& e, const std::string& p, const SweepGrid& g) {
    if (g.op->prior_art_operator_report) operator_report(e, p, g);
    const SweepCounts want = expected_counts(g);
    const std::string bi = p + ".batch_invariance";
    const json* inv = object(e, p, "batch_invariance");
    if (inv) {
      const json* all = object(*inv, bi, "all_rows");
      if (all) {
        if (all->size() != g.full_batches.size())
          say(bi + ".all_rows", "has " + std::to_string(all->size()) + " full batches, the grid " +
                                    std::to_string(g.full_batches.size()));
        for (size_t i = 0; i < g.full_batches.size(); ++i) {
          const std::string n = std::to_string(g.full_batches[i]), at = bi + ".all_rows";
          const json* b = object(*all, at, n.c_str());
          if (!b) continue;
          const json* rows = count(*b, at + "." + n, "rows");
          equal(rows, at + "." + n + ".rows", want.all_rows_rows[i], "seeds x n");
          for (const char* k : {"fwd_differ", "rowgrad_differ"})
            if (rows) at_most(count(*b, at + "." + n, k), at + "." + n + "." + k, rows->get<int64_t>(), "rows");
        }
      }
      const json* rep = boolean(*inv, bi, "params_repeatable");
      const std::string fs = bi + ".full_vs_sub_batches";
      const json* sub = object(*inv, bi, "full_vs_sub_batches");
      int64_t sub_fwd = 0, sub_grad = 0;
      if (sub) {
        equal(member(*sub, fs, "full_batch", json::value_t::number_unsigned), fs + ".full_batch", g.big_batch, "the big batch");
        equal(member(*sub, fs, "sub_batch_sizes", json::value_t::array), fs + ".sub_batch_sizes", g.sub_batch_sizes,
              "the sub-batch sizes");
        const json* n = count(*sub, fs, "sub_batches");
        equal(n, fs + ".sub_batches", want.sub_batches, "every sub-batch of the first two seeds");
        for (const char* k : {"fwd_differ", "rowgrad_differ"}) {
          const json* d = count(*sub, fs, k);
          if (n) at_most(d, fs + "." + k, n->get<int64_t>(), "sub-batches");
          if (d) (std::string(k) == "fwd_differ" ? sub_fwd : sub_grad) = d->get<int64_t>();
        }
      }
      const std::string ss = bi + ".batch_size_sweep";
      const json* sw = object(*inv, bi, "batch_size_sweep");
      int64_t differ = 0;
      if (sw) {
        const int64_t n = g.full_batches.empty() ? 0 : g.full_batches.back();
        equal(member(*sw, ss, "batch_sizes", json::value_t::array), ss + ".batch_sizes", sweep_batch_sizes(n),
              "1..9 and 2^k-1, 2^k, 2^k+1 up to n");
        equal(member(*sw, ss, "probe_rows", json::value_t::array), ss + ".probe_rows", probe_rows(n), "the probe rows");
        const json* c = count(*sw, ss, "comparisons");
        equal(c, ss + ".comparisons", want.comparisons, "(front, middle, back for each size, and reversed) x probes x seeds");
        const json* d = count(*sw, ss, "differ");
        if (c) at_most(d, ss + ".differ", c->get<int64_t>(), "comparisons");
        if (d) differ = d->get<int64_t>();
        const json* ff = member(*sw, ss, "first_failures", json::value_t::array);
        if (ff) {
          if (int64_t(ff->size()) != std::min<int64_t>(differ, 8))
            say(ss + ".first_failures", "lists " + std::to_string(ff->size()) + " failures, not the first " +
                                            std::to_string(std::min<int64_t>(differ, 8)) + " of " +
                                            std::to_string(differ));
          for (size_t i = 0; i < ff->size(); ++i)
            for (const char* k : {"seed", "batch", "position", "row"})
              count((*ff)[i], ss + ".first_failures[" + std::to_string(i) + "]", k);
        }
      }
      const json* inv_ok = boolean(*inv, bi, "batch_invariant");
      if (inv_ok && rep && all && sub && sw) {
        bool clean = rep->get<bool>() && sub_fwd == 0 && sub_grad == 0 && differ == 0;
        for (const auto& [n, b] : all->items())
          clean = clean && b.value("fwd_differ", 0) == 0 && b.value("rowgrad_differ", 0) == 0;
        if (inv_ok->get<bool>() != clean)
          say(bi + ".batch_invariant", std::string("is ") + (inv_ok->get<bool>() ? "true" : "false") +
                                           ", but the AND of the checks above is " + (clean ? "true" : "false"));
      }
    }
    split_invariance(e, p, inv);
    const std::string al = p + ".accuracy_latency";
    const json* acc = object(e, p, "accuracy_latency");
    if (!acc) return;
    for (int64_t rows : g.accuracy_rows) {
      const std::string k = std::to_string(rows), at = al + "." + k;
      const json* a = object(*acc, al, k.c_str());
      if (!a) continue;
      number(*a, at, "fwd_rel_err");
      if (const json* gr = object(*a, at, "grad_rel_err"))
        for (const SeedField& f : seed_grad_fields(*g.op)) number(*gr, at + ".grad_rel_err", f.key.c_str());
      number(*a, at, "fwd_us");
      number(*a, at, "fwd_bwd_us");
    }
  }
};

}  // namespace

// An operator report in its own form (RL-Kernel's h3_operator_report): each
// backward row's repeatability and errors, and perf rows by size.
std::vector<std::string> operator_report_problems(const json& report) {
  Checker c;
  c.member(report, "", "op", json::value_t::string);
  const json* acc = c.object(report, "", "accuracy");
  const json* back = acc ? c.object(*acc, "accuracy", "backward") : nullptr;
  if (back && back->empty()) c.say("accuracy.backward", "lists no implementation");
  if (back)
    for (const auto& [row, e] : back->items()) {
      const std::string p = "accuracy.backward." + row;
      c.boolean(e, p, "repeat_bitwise_equal");
      if (const json* rel = c.object(e, p, "rel_error"))
        for (const auto& [k, v] : rel->items()) c.number(*rel, p + ".rel_error", k.c_str());
    }
  const json* perf = c.member(report, "", "perf", json::value_t::array);
  for (size_t i = 0; perf && i < perf->size(); ++i) {
    const std::string at = "perf[" + std::to_string(i) + "]";
    c.member((*perf)[i], at, "case", json::value_t::string);
    for (const auto& [k, v] : (*perf)[i].items())
      if (k != "case" && k != "op" && k != "backend") c.number((*perf)[i], at, k.c_str());
  }
  return c.problems;
}

std::vector<std::string> sweep_schema_problems(const json& report) {
  Checker c;
  if (!report.is_object()) return {"(top level): not a JSON object"};
  if (report.value("kind", "") == "h3_operator_report") return operator_report_problems(report);
  c.object(report, "", "environment");
  const json* quick = c.boolean(report, "", "quick");
  // The op's grid; a report that names no op is gate_residual's (the seed's form).
  const std::string op_name = report.contains("op") && report["op"].is_string() ? report["op"].get<std::string>()
                                                                                   : gate_residual_schema().name;
  const OpSchema* op = find_op_schema(op_name);
  if (!op) {
    c.say("op", unknown_op(op_name));
    return c.problems;
  }
  const SweepGrid g = quick && quick->get<bool>() ? quick_grid(*op) : full_grid(*op);
  const json* results = c.object(report, "", "results");
  const json* plain = results ? c.object(*results, "results", "plain") : nullptr;
  if (!plain) return c.problems;
  if (plain->empty()) c.say("results.plain", "lists no implementation");
  for (const auto& [name, e] : plain->items()) {
    const std::string p = "results.plain." + name;
    if (e.is_object() && e.contains("unavailable")) {
      c.member(e, p, "unavailable", json::value_t::string);
      continue;
    }
    // A sweep that an error ended (gatecheck's own "error") has partial counts: its error is the finding.
    if (e.is_object() && e.contains("gatecheck") && e["gatecheck"].is_object() && e["gatecheck"].contains("error")) {
      c.object(e, p, "batch_invariance");
      c.object(e, p, "accuracy_latency");
      continue;
    }
    c.implementation(e, p, g);
  }
  return c.problems;
}

}  // namespace gatecheck
