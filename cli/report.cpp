#include "report.h"

#include "../findings/repro_command.h"
#include "../properties/engine/scale_check.h"
#include "../properties/catalog/verdict_word.h"
#include "scale_cli.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <map>
#include <sstream>

namespace gatecheck {

namespace {
// The shrunk case's shape and, when short, its index. Generator labels
// (pattern, value class) describe where the case came from, not what is
// left after shrinking, so they are not repeated here.
std::string describe_minimal(const Case& c) {
  std::ostringstream s;
  s << dtype_name(c.dtype) << " rows=" << c.rows << " dim=" << c.dim << " gates=" << c.gates;
  if (c.rows > 0 && c.rows <= 16) {
    s << " index=[";
    for (int64_t r = 0; r < c.rows; ++r) s << (r ? "," : "") << c.index[size_t(r)];
    s << "]";
  }
  if (c.plan) s << " plan=" << c.plan->kind << "(" << c.plan->batches.size() << " batches)";
  return s.str();
}
// A failure's minimal case, for the report and its JSON: a scale failure's
// is its spec and view.
std::string minimal_case_text(const FailureReport& f) {
  return f.scale_shrunk ? describe(*f.scale_shrunk) : describe_minimal(f.shrunk);
}
// pass, fail, finding (properties/verdict_word.h); "inconclusive (N cases)"
// where a claimed property held on fewer cases than its floor, and "no cases"
// where an unclaimed one ran none.
std::string result_verdict(const PropertyResult& p) {
  if (p.inconclusive()) return "inconclusive (" + std::to_string(p.cases) + (p.cases == 1 ? " case)" : " cases)");
  if (p.passed && p.cases == 0) return "no cases";
  return verdict_word(p.passed, p.failure && p.failure->claimed);
}
// The table shouts a failure.
std::string table_word(const PropertyResult& p) {
  const std::string w = result_verdict(p);
  return w == "fail" ? "FAIL" : w;
}
}  // namespace

void print_table(std::ostream& os, const CheckReport& r, const std::vector<Subject>& impls) {
  os << "\nimplementation contracts:\n";
  for (const auto& i : impls) os << "  " << i.label() << ": " << i.contract.describe() << "\n";
  size_t w = 16;  // the implementation column fits the longest label (plugin paths can be long)
  for (const auto& p : r.results) w = std::max(w, p.impl.size() + 2 + std::strlen(device_name(p.device)));
  const int iw = int(w + 2);
  size_t vw = 9;  // the verdict column fits "inconclusive (N cases)"
  for (const auto& p : r.results) vw = std::max(vw, table_word(p).size() + 1);
  os << "\n" << std::left << std::setw(iw) << "implementation" << std::setw(20) << "property" << std::setw(9)
     << "claimed" << std::right << std::setw(8) << "cases" << "  " << std::left << std::setw(int(vw)) << "verdict"
     << std::right << std::setw(8) << "time" << "\n";
  os << std::string(size_t(iw) + 47 + vw, '-') << "\n";
  for (const auto& p : r.results) {
    std::ostringstream label;
    label << p.impl << "@" << device_name(p.device);
    char t[32];
    std::snprintf(t, sizeof t, "%.1fs", p.seconds);
    os << std::left << std::setw(iw) << label.str() << std::setw(20) << p.property << std::setw(9)
       << (p.claimed ? "yes" : "no") << std::right << std::setw(8) << p.cases << "  " << std::left << std::setw(int(vw))
       << table_word(p) << std::right << std::setw(8) << t << "\n";
  }
  for (const auto& p : r.results)  // the case in flight may run past its share; say which and by how much
    for (const auto& o : p.overruns) os << "over its time: " << p.impl << "@" << device_name(p.device) << " " << p.property << ": " << o << "\n";
  // A pair whose scale tier drew cases but ran none: the tier's totals below would hide it.
  for (const auto& p : r.results) {
    if (!p.scale_runs.empty() || p.scale_skipped.empty()) continue;
    std::map<std::string, int64_t> why;
    for (const auto& k : p.scale_skipped) ++why[k.why];
    os << "no scale case: " << p.impl << "@" << device_name(p.device) << " " << p.property << ": "
       << p.scale_skipped.size() << (p.scale_skipped.size() == 1 ? " draw" : " draws") << " skipped (";
    bool first = true;
    for (const auto& [w, n] : why) {
      os << (first ? "" : "; ") << n << " " << w;
      first = false;
    }
    os << ")\n";
  }
}

void print_failures(std::ostream& os, const CheckReport& r, const SavedFailures& saved,
                    const std::string& generator_flags) {
  for (size_t k = 0; k < r.results.size(); ++k) {
    const auto& p = r.results[k];
    if (!p.failure) continue;
    const FailureReport& f = *p.failure;
    os << "\n" << (f.claimed ? "FAILURE" : "FINDING (unclaimed property, does not fail the run)") << ": "
       << p.impl << "@" << device_name(p.device) << " " << p.property << "\n";
    os << "  found after " << std::fixed << std::setprecision(2) << f.seconds_to_find << " s; shrunk in "
       << f.shrink_steps << " steps from " << describe_found_case(f) << "\n";
    if (f.shrink_cut_short)
      os << "  smallest case found (the shrink stopped early, at --shrink-seconds, a stop or a device error: a "
            "smaller case may fail; gatecheck shrink FILE goes on): "
         << minimal_case_text(f) << "\n";
    else
      os << "  minimal case: " << minimal_case_text(f) << "\n";
    std::istringstream ev(evidence_text(f.verdict));
    for (std::string line; std::getline(ev, line);) os << "  " << line << "\n";
    if (k < saved.paths.size() && !saved.paths[k].empty()) {
      os << "  saved: " << saved.paths[k] << "\n";
      os << "  repro: " << repro_command(saved.paths[k], p.impl, p.device, p.failure->verdict) << "\n";
    }
    if (!f.reproduce.empty())
      os << "  RapidCheck: RC_PARAMS=\"reproduce=" << f.reproduce << "\""
         << (generator_flags.empty() ? "" : " (replay with " + generator_flags + ")") << "\n";
  }
}

void print_coverage(std::ostream& os, const Coverage& c) {
  auto line = [&](const char* what, const std::map<std::string, int64_t>& m) {
    if (m.empty()) return;
    int64_t total = 0;
    for (const auto& kv : m) total += kv.second;
    os << "  " << std::left << std::setw(10) << what;
    for (const auto& kv : m) {
      const double pct = 100.0 * double(kv.second) / double(total);
      os << " " << kv.first << " ";
      if (kv.second > 0 && pct < 0.5) os << "<1%";  // drawn, rarely: not 0%
      else os << std::fixed << std::setprecision(0) << pct << "%";
    }
    os << "\n";
  };
  // sizes holds "rows 1000+", "dim 0", "gates 1-9", ...: a line for each, so
  // that each adds up to 100% of the cases.
  std::map<std::string, std::map<std::string, int64_t>> size_lines;
  for (const auto& kv : c.sizes) {
    const size_t sp = kv.first.find(' ');
    size_lines[kv.first.substr(0, sp)][sp == std::string::npos ? "" : kv.first.substr(sp + 1)] += kv.second;
  }
  os << "\ncoverage (share of generated cases):\n";
  line("dtype", c.dtypes);
  line("pattern", c.patterns);
  line("values", c.values);
  for (const char* what : {"rows", "dim", "gates"}) line(what, size_lines[what]);
  if (!c.sizes.empty()) os << "  wide dim   " << wide_dims_text(c.wide_dims) << "\n";
  line("plan", c.plans);
  print_scale_coverage(os, c.scale);
}

nlohmann::json report_json(const CheckReport& r, const SavedFailures& saved, const std::vector<Subject>& impls,
                           const std::vector<std::string>& replays, const GenLimits& limits) {
  using nlohmann::json;
  json j;
  j["gatecheck_version"] = GATECHECK_VERSION;
  if (replays.empty()) {
    j["seed"] = r.seed;
  } else {
    j["seed"] = nullptr;
    j["replay_of"] = {{"rc_params_reproduce", replays}};
  }
  j["generator"] = {{"max_rows", limits.max_rows},
                    {"max_dim", limits.max_dim},
                    {"max_gates", limits.max_gates},
                    {"min_rows", limits.min_rows},
                    {"min_dim", limits.min_dim},
                    {"min_gates", limits.min_gates},
                    {"h3_dims", limits.big_dims},
                    {"wide_dim_max", limits.big_dims ? limits.big_dim_max : 0}};
  j["seconds"] = r.seconds;
  j["jobs"] = r.jobs;
  j["interrupted"] = r.interrupted;
  j["stopped_on_failure"] = r.stopped_on_failure;
  json contracts = json::object();
  for (const auto& i : impls) contracts[i.label()] = i.contract.describe();
  j["contracts"] = contracts;
  json results = json::array();
  for (size_t k = 0; k < r.results.size(); ++k) {
    const auto& p = r.results[k];
    json e = {{"impl", p.impl},     {"device", device_name(p.device)}, {"property", p.property},
              {"claimed", p.claimed}, {"cases", p.cases},              {"passed", p.passed},
              {"case_floor", p.case_floor},   {"inconclusive", p.inconclusive()},
              {"verdict", result_verdict(p)}, {"seconds", p.seconds}, {"overruns", p.overruns}};
    json runs = json::array();
    for (const ScaleRunRecord& s : p.scale_runs)
      runs.push_back({{"case", s.c},
                      {"parts", s.parts},
                      {"units", s.units},
                      {"allowance_seconds", s.allowance},
                      {"estimate_seconds", s.estimate},
                      {"seconds", s.seconds},
                      {"waited_seconds", s.waited},
                      {"expected_wait_seconds", s.expected_wait}});
    e["scale_runs"] = runs;
    json skipped = json::array();
    for (const ScaleSkipRecord& s : p.scale_skipped) {
      json k = {{"draw", s.shape}, {"why", s.why}};
      if (s.units > 0)
        k.update({{"parts", s.parts},
                  {"units", s.units},
                  {"estimate_seconds", s.estimate},
                  {"left_seconds", s.left},
                  {"expected_wait_seconds", s.expected_wait},
                  {"rate_source", s.rate_source}});
      skipped.push_back(k);
    }
    e["scale_skipped"] = skipped;
    if (p.failure) {
      const FailureReport& f = *p.failure;
      const FailureShape shape = failure_shape(f);
      e["failure"] = {{"case_file", k < saved.paths.size() ? saved.paths[k] : ""},
                      {"rows", shape.rows},
                      {"dim", shape.dim},
                      {"gates", shape.gates},
                      {"dtype", dtype_name(shape.dtype)},
                      {"scale", bool(f.scale_original)},
                      {"claimed", f.claimed},
                      {"seconds_to_find", f.seconds_to_find},
                      {"shrink_steps", f.shrink_steps},
                      {"shrink_cut_short", f.shrink_cut_short},
                      {"reproduce", f.reproduce},
                      {"message", f.verdict.message},
                      {"minimal_case", minimal_case_text(f)},
                      {"original_case", describe_found_case(f)},
                      {"evidence", evidence_text(f.verdict)},
                      {"repro", k < saved.paths.size() && !saved.paths[k].empty()
                                    ? repro_command(saved.paths[k], p.impl, p.device, f.verdict)
                                    : std::string()}};
    }
    results.push_back(e);
  }
  j["results"] = results;
  json cov;
  cov["dtypes"] = r.coverage.dtypes;
  cov["patterns"] = r.coverage.patterns;
  cov["values"] = r.coverage.values;
  cov["sizes"] = r.coverage.sizes;
  cov["plans"] = r.coverage.plans;
  cov["wide_dims"] = wide_dims_json(r.coverage.wide_dims);
  cov["scale"] = scale_coverage_json(r.coverage.scale);
  j["coverage"] = cov;
  return j;
}

}  // namespace gatecheck
