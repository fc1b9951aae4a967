#include "campaign_report.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <vector>

namespace gatecheck::fuzz {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

json read_json(const fs::path& p) {
  std::ifstream f(p);
  try {
    return json::parse(f);
  } catch (const json::exception&) {
    return json::object();  // a worker may be mid-write; the next report catches up
  }
}

struct Sample {
  double t = 0, execs_per_s = 0, features = 0, coverage = 0, corpus = 0;
};

// timeline.tsv: t worker execs ft cov exec_s corp. One sample per t: exec/s
// summed over workers, features and coverage the max (the corpus is shared).
std::vector<Sample> read_timeline(const fs::path& p) {
  std::map<double, Sample> by_t;
  std::ifstream f(p);
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream s(line);
    double t, worker, execs, ft, cov, eps, corp;
    if (!(s >> t >> worker >> execs >> ft >> cov >> eps >> corp)) continue;
    Sample& x = by_t[t];
    x.t = t;
    x.execs_per_s += eps;
    x.features = std::max(x.features, ft);
    x.coverage = std::max(x.coverage, cov);
    x.corpus = std::max(x.corpus, corp);
  }
  std::vector<Sample> v;
  for (auto& [t, x] : by_t) v.push_back(x);
  return v;
}

std::string svg_chart(const std::vector<Sample>& v, double Sample::*field, const std::string& title) {
  const double W = 640, H = 220, L = 60, B = 30, T = 24;
  double tmax = 1, ymax = 1;
  for (const auto& s : v) {
    tmax = std::max(tmax, s.t);
    ymax = std::max(ymax, s.*field);
  }
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H << "\" font-family=\"sans-serif\" font-size=\"11\">"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>"
    << "<text x=\"" << L << "\" y=\"16\" font-size=\"13\">" << title << "</text>"
    << "<line x1=\"" << L << "\" y1=\"" << H - B << "\" x2=\"" << W - 10 << "\" y2=\"" << H - B << "\" stroke=\"black\"/>"
    << "<line x1=\"" << L << "\" y1=\"" << T << "\" x2=\"" << L << "\" y2=\"" << H - B << "\" stroke=\"black\"/>"
    << "<text x=\"" << L - 4 << "\" y=\"" << T + 4 << "\" text-anchor=\"end\">" << int64_t(ymax) << "</text>"
    << "<text x=\"" << L - 4 << "\" y=\"" << H - B << "\" text-anchor=\"end\">0</text>"
    << "<text x=\"" << W - 10 << "\" y=\"" << H - 8 << "\" text-anchor=\"end\">" << int64_t(tmax) << " s</text>"
    << "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"";
  for (const auto& s : v)
    o << L + (W - 10 - L) * s.t / tmax << "," << (H - B) - (H - B - T) * (s.*field) / ymax << " ";
  o << "\"/></svg>";
  return o.str();
}

void add_counts(json& total, const json& part) {
  for (auto it = part.begin(); it != part.end(); ++it) {
    json& t = total[it.key()];
    if (it->is_number()) {
      t = (t.is_number() ? t.get<int64_t>() : 0) + it->get<int64_t>();
    } else if (it->is_object()) {
      if (!t.is_object()) t = json::object();
      add_counts(t, *it);
    }
  }
}

std::string count_table(const json& counts, const char* what) {
  std::ostringstream o;
  o << "| " << what << " | cases |\n|---|---:|\n";
  for (auto it = counts.begin(); it != counts.end(); ++it) o << "| " << it.key() << " | " << it->get<int64_t>() << " |\n";
  return o.str();
}

}  // namespace

int write_campaign_report(const std::string& dir_s) {
  const fs::path dir(dir_s);
  if (!fs::exists(dir / "campaign.json")) {
    std::fprintf(stderr, "report: %s has no campaign.json (not a campaign folder)\n", dir_s.c_str());
    return 2;
  }
  const json campaign = read_json(dir / "campaign.json");
  const auto timeline = read_timeline(dir / "timeline.tsv");
  json counts = json::object();
  // A run continued with --continue keeps its earlier attempts' stats as a<T>-w*.json, T the
  // history/ folder that holds that attempt's campaign.json: their cases count over their time too.
  std::set<std::string> earlier_attempts;
  if (fs::exists(dir / "stats"))
    for (const auto& e : fs::directory_iterator(dir / "stats")) {
      if (e.path().extension() != ".json") continue;
      add_counts(counts, read_json(e.path()));
      const std::string name = e.path().filename().string();
      if (const auto dash = name.find("-w"); name[0] == 'a' && dash != std::string::npos)
        earlier_attempts.insert(name.substr(1, dash - 1));
    }
  json failures = json::array();
  {
    std::ifstream f(dir / "failures.jsonl");
    std::string line;
    while (std::getline(f, line))
      if (!line.empty()) failures.push_back(json::parse(line, nullptr, false));
  }
  int64_t new_failures = 0;
  for (const auto& f : failures) new_failures += f.value("new", false) ? 1 : 0;
  double peak_eps = 0, last_ft = 0, mean_eps = 0;
  for (const auto& s : timeline) {
    peak_eps = std::max(peak_eps, s.execs_per_s);
    mean_eps += s.execs_per_s / double(timeline.size());
    last_ft = s.features;
  }
  // Executions per second summed over the workers: every case they ran over
  // the time they ran (a merged campaign: the sum of its shares' figures,
  // since shares run side by side).
  const json shards = campaign.value("shards", json::array());
  const int64_t cases = counts.value("cases", int64_t(0));
  double fuzz_seconds = campaign.value("fuzz_seconds", campaign.value("seconds", 0.0));
  std::vector<std::string> attempts_untimed;  // an earlier attempt whose campaign.json is gone
  for (const auto& t : earlier_attempts) {
    const fs::path earlier = dir / "history" / t / "campaign.json";
    if (!fs::exists(earlier)) {
      attempts_untimed.push_back(t);
      continue;
    }
    const json c = read_json(earlier);
    fuzz_seconds += c.value("fuzz_seconds", c.value("seconds", 0.0));
  }
  double overall_eps = fuzz_seconds > 0 && attempts_untimed.empty() ? double(cases) / fuzz_seconds : 0.0;
  if (!shards.empty()) {
    overall_eps = 0;
    for (const auto& sh : shards) overall_eps += sh.value("execs_per_s", 0.0);
  }

  json report = {{"campaign", campaign},
                 {"cases", cases},
                 {"fuzz_seconds", fuzz_seconds},  // every attempt's, with --continue
                 {"attempts", earlier_attempts.size() + 1},
                 {"execs_per_s", {{"overall", overall_eps}, {"mean", mean_eps}, {"peak", peak_eps}}},
                 {"features", last_ft},
                 {"counts", counts},
                 {"failures", failures},
                 {"new_failures", new_failures},
                 {"timeline", json::array()}};
  for (const auto& s : timeline)
    report["timeline"].push_back({{"t", s.t}, {"execs_per_s", s.execs_per_s}, {"features", s.features},
                                  {"coverage", s.coverage}, {"corpus", s.corpus}});
  std::ofstream(dir / "report.json") << report.dump(1) << "\n";

  const std::string eps_svg = svg_chart(timeline, &Sample::execs_per_s, "executions per second (all workers)");
  const std::string ft_svg = svg_chart(timeline, &Sample::features, "features (coverage + extra counters)");
  std::ofstream(dir / "execs_per_s.svg") << eps_svg;
  std::ofstream(dir / "features.svg") << ft_svg;

  const std::string mode = campaign.value("mode", std::string("cpu"));
  const int64_t workers = campaign.value("workers", int64_t(0)), gpus = campaign.value("gpus", int64_t(0));
  std::ostringstream md;
  md << "# gatecheck fuzz campaign\n\n"
     << "- implementations: " << campaign.value("impls", json::array()).dump() << "\n"
     << "- workers: " << workers << " (" << mode;
  if (gpus > 0) md << ", over " << gpus << " GPU(s)";
  if (const std::string mps = campaign.value("mps", std::string()); gpus > 0 && !mps.empty()) md << "; MPS " << mps;
  if (!shards.empty()) md << ", in " << shards.size() << " share(s)";
  md << ")\n";
  if (const int64_t n = campaign.value("shard_count", int64_t(0)); n > 0 && shards.empty())
    md << "- share: " << campaign.value("shard", std::string()) << " of the campaign (host "
       << campaign.value("host", std::string()) << ")\n";
  md << "- duration: " << campaign.value("seconds", 0.0) << " s (asked " << campaign.value("hours", 0.0) << " h)\n"
     << "- cases executed: " << cases;
  if (!earlier_attempts.empty())
    md << " over " << earlier_attempts.size() + 1 << " attempts (--continue; " << int64_t(fuzz_seconds)
       << " s of fuzzing in all)";
  if (attempts_untimed.empty())
    md << "; exec/s summed over the workers " << int64_t(overall_eps) << " (cases / fuzzing time)";
  else  // (cases over this attempt's time alone would overstate the rate)
    md << "; exec/s unknown: no history/" << attempts_untimed.front() << "/campaign.json for an earlier attempt's time";
  md << "; status lines: mean " << int64_t(mean_eps) << ", peak " << int64_t(peak_eps)
     << "; features at end " << int64_t(last_ft) << "\n"
     << "- new failures: " << new_failures << " (" << failures.size() << " failure record(s) in all)\n"
     << "- status: " << campaign.value("status", std::string("unknown"));
  // nightly.sh's reason when the run is not a clean one (interrupted, workers that gave up)
  if (const std::string note = campaign.value("note", std::string()); !note.empty()) md << " (" << note << ")";
  md << "\n\n![execs/s](execs_per_s.svg)\n\n![features](features.svg)\n\n";
  if (!shards.empty()) {
    md << "## Shares\n\n| share | host | status | workers | seconds | cases | exec/s | failure records |\n"
       << "|---|---|---|---:|---:|---:|---:|---:|\n";
    for (const auto& sh : shards)
      md << "| " << sh.value("label", std::string()) << " | " << sh.value("host", std::string()) << " | "
         << sh.value("status", std::string()) << " | " << sh.value("workers", 0) << " | "
         << int64_t(sh.value("fuzz_seconds", 0.0)) << " | " << sh.value("cases", int64_t(0)) << " | "
         << int64_t(sh.value("execs_per_s", 0.0)) << " | " << sh.value("failure_records", 0) << " |\n";
    for (const auto& m : campaign.value("missing_shards", json::array()))
      md << "| " << m.dump() << "/" << campaign.value("shard_count", 0) << " | | missing | | | | | |\n";
    md << "\n";
  }
  md << "## Failures\n\n";
  if (failures.empty()) md << "None.\n";
  for (const auto& f : failures) {
    md << "- " << (f.value("new", false) ? "**NEW** " : "known ") << "`" << f.value("signature", std::string()) << "` on "
       << f.value("shape", std::string()) << "\n";
    if (f.contains("shards"))
      md << "  - found by share(s) " << f["shards"].dump() << " (" << f.value("records", 1) << " record(s))\n";
    if (f.contains("summary")) md << "  - the fuzzer: " << f.value("summary", std::string()) << "\n";
    if (f.contains("crash")) md << "  - crash: " << f.value("crash", std::string()) << "\n";
    md << "  - case: `" << f.value("case", std::string()) << "`\n  - repro: `"
       << f.value("repro", std::string()) << "`\n";
  }
  md << "\n## Cases per class\n\n";
  for (const char* k : {"patterns", "dtypes", "values", "plans", "shapes"})
    if (counts.contains(k)) md << count_table(counts[k], k) << "\n";
  std::ofstream(dir / "report.md") << md.str();

  std::string html = md.str();  // the same text; charts inline so the page stands alone
  std::ostringstream h;
  h << "<!doctype html><meta charset=\"utf-8\"><title>gatecheck fuzz campaign</title><body style=\"font-family:sans-serif\">"
    << eps_svg << "<br>" << ft_svg << "<pre>" ;
  for (char c : html) {
    if (c == '<') h << "&lt;";
    else if (c == '&') h << "&amp;";
    else h << c;
  }
  h << "</pre></body>\n";
  std::ofstream(dir / "report.html") << h.str();
  std::cout << "report: " << dir_s << "/report.md (+ .json, .html): " << cases << " cases, "
            << (attempts_untimed.empty() ? std::to_string(int64_t(overall_eps)) : std::string("unknown"))
            << " exec/s summed over " << workers << " worker(s), " << new_failures << " new failure(s)" << std::endl;
  return 0;
}

}  // namespace gatecheck::fuzz
