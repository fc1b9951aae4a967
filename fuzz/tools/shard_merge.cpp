#include "shard_merge.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

namespace gatecheck::fuzz {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

struct MergeError {
  std::string message;
};

json read_json_file(const fs::path& p) {
  std::ifstream f(p);
  return json::parse(f, nullptr, false);  // discarded (not an object) when unreadable
}

// One share (or whole campaign) folder and what the merge takes from it.
struct Part {
  fs::path dir;
  json campaign;
  std::string label;  // "I/N", or the folder for a campaign that is not a share
  int index = -1;     // the share's I; -1 for a whole campaign
  int count = 0;      // the share's N
  int64_t cases = 0;
  double fuzz_seconds = 0;
  std::vector<json> failures;
  std::map<double, std::vector<double>> timeline;  // t -> execs, ft, cov, exec/s, corp (summed / max over workers)
};

// timeline.tsv rows: t worker execs ft cov exec_s corp; one sample per t,
// exec/s and execs summed over the workers, the rest the maximum.
void read_timeline(Part& p) {
  std::ifstream f(p.dir / "timeline.tsv");
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream s(line);
    double t, worker, execs, ft, cov, eps, corp;
    if (!(s >> t >> worker >> execs >> ft >> cov >> eps >> corp)) continue;
    auto& x = p.timeline[t];
    if (x.empty()) x.assign(5, 0.0);
    x[0] += execs;
    x[1] = std::max(x[1], ft);
    x[2] = std::max(x[2], cov);
    x[3] += eps;
    x[4] = std::max(x[4], corp);
  }
}

// A share that did not finish (killed, crashed, out of time) may leave crash
// inputs its workers had not yet turned into records: each becomes a record
// of its own (signature "in-flight|I/N|file"), with the fuzzer's repro command,
// so that the merge keeps what the share found before it died.
void add_in_flight_crashes(Part& p) {
  if (p.campaign.value("status", std::string()) == "finished" || !fs::is_directory(p.dir / "crashes")) return;
  std::string recorded;
  for (const auto& r : p.failures) recorded += r.dump() + "\n";
  std::vector<fs::path> inputs;
  for (const auto& e : fs::directory_iterator(p.dir / "crashes")) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file() || name.rfind("min-", 0) == 0 || name.find('-') == std::string::npos) continue;
    if (recorded.find(name) == std::string::npos) inputs.push_back(e.path());
  }
  std::sort(inputs.begin(), inputs.end());
  std::string impls;
  for (const auto& i : p.campaign.value("impls", json::array()))
    if (i.is_string()) impls += (impls.empty() ? "" : ",") + i.get<std::string>();
  const std::string status = p.campaign.value("status", std::string("unknown"));
  for (const auto& in : inputs)
    p.failures.push_back({{"signature", "in-flight|" + p.label + "|" + in.filename().string()},
                          {"property", "-"},
                          {"impl", impls},
                          {"case", in.string()},
                          {"repro", "GATECHECK_FUZZ_IMPL=" + impls + " " + p.campaign.value("fuzzer", std::string("fuzz_gate_residual")) + " " + in.string()},
                          {"shape", "-"},
                          {"input", in.string()},
                          {"crash", "share " + p.label + " ended (" + status + ") before it replayed this crash input"}});
}

Part read_part(const fs::path& dir) {
  Part p;
  p.dir = fs::absolute(dir).lexically_normal();
  if (!p.dir.has_filename()) p.dir = p.dir.parent_path();  // "shards/1/" -> "shards/1"
  if (!fs::is_regular_file(p.dir / "campaign.json"))
    throw MergeError{"'" + dir.string() + "' has no campaign.json (not a campaign or shard folder)"};
  p.campaign = read_json_file(p.dir / "campaign.json");
  if (!p.campaign.is_object()) throw MergeError{"'" + (p.dir / "campaign.json").string() + "' is not valid JSON"};
  if (p.campaign.value("mode", std::string()) == "merged")
    throw MergeError{"'" + dir.string() + "' holds a merged report, not a campaign: give the shards' folders"};
  p.count = p.campaign.value("shard_count", 0);
  p.index = p.count > 0 ? p.campaign.value("shard_index", -1) : -1;
  if (p.count > 0 && (p.index < 0 || p.index >= p.count))
    throw MergeError{"'" + (p.dir / "campaign.json").string() + "': shard_index out of range"};
  p.label = p.index >= 0 ? std::to_string(p.index) + "/" + std::to_string(p.count) : p.dir.string();
  if (fs::is_directory(p.dir / "stats"))
    for (const auto& e : fs::directory_iterator(p.dir / "stats"))
      if (e.path().extension() == ".json") {
        const json s = read_json_file(e.path());
        if (s.is_object()) p.cases += s.value("cases", int64_t(0));
      }
  std::ifstream f(p.dir / "failures.jsonl");
  std::string line;
  while (std::getline(f, line)) {
    json r = json::parse(line, nullptr, false);
    if (r.is_object() && r.contains("signature")) p.failures.push_back(std::move(r));
  }
  add_in_flight_crashes(p);
  read_timeline(p);
  // A share that was killed wrote no end time: its timeline tells how long it ran.
  p.fuzz_seconds = p.campaign.value("fuzz_seconds", p.campaign.value("seconds", 0.0));
  if (!p.timeline.empty()) p.fuzz_seconds = std::max(p.fuzz_seconds, p.timeline.rbegin()->first);
  return p;
}

std::string file_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

// Copies a failure's case file into out/failures/ (the merged report stands
// without the shares' folders) and points "case" and "repro" at the copy.
void adopt_case_file(json& record, const Part& p, const fs::path& out) {
  const std::string old_path = record.value("case", std::string());
  if (old_path.empty() || !fs::is_regular_file(old_path)) return;
  fs::create_directories(out / "failures");
  fs::path copy = out / "failures" / fs::path(old_path).filename();
  if (fs::exists(copy) && !fs::equivalent(copy, old_path) && file_text(copy) != file_text(old_path)) {
    std::string tag = p.label;
    std::replace_if(tag.begin(), tag.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '-');
    copy = out / "failures" / ("shard-" + tag + "-" + fs::path(old_path).filename().string());
  }
  if (!fs::exists(copy)) fs::copy_file(old_path, copy);
  record["case"] = copy.string();
  if (record.contains("repro")) record["repro"] = replace_all(record.value("repro", std::string()), old_path, copy.string());
}

std::set<std::string> read_lines(const fs::path& p) {
  std::set<std::string> lines;
  std::ifstream f(p);
  std::string line;
  while (std::getline(f, line))
    if (!line.empty()) lines.insert(line);
  return lines;
}

// Each share's timeline on one axis: at every time any share sampled, each
// share that was still running contributes its latest sample.
void write_timeline(const std::vector<Part>& parts, const fs::path& out) {
  std::set<double> times;
  for (const auto& p : parts)
    for (const auto& [t, x] : p.timeline) times.insert(t);
  std::ofstream f(out / "timeline.tsv");
  for (double t : times)
    for (size_t i = 0; i < parts.size(); ++i) {
      const auto& tl = parts[i].timeline;
      if (tl.empty() || t > tl.rbegin()->first) continue;
      auto it = tl.upper_bound(t);
      if (it == tl.begin()) continue;
      const auto& x = std::prev(it)->second;
      f << t << "\t" << i << "\t" << int64_t(x[0]) << "\t" << int64_t(x[1]) << "\t" << int64_t(x[2]) << "\t"
        << int64_t(x[3]) << "\t" << int64_t(x[4]) << "\n";
    }
}

// A part's fuzz target (one op's), and what the shares of one campaign share besides: its
// seed. (Its shares may run different implementations: the merge takes their union.)
std::string fuzz_target(const Part& p) {
  const std::string fuzzer = p.campaign.value("fuzzer", std::string());
  return fuzzer.empty() ? std::string("an unnamed fuzz target") : fs::path(fuzzer).filename().string();
}
std::string campaign_identity(const Part& p) {
  const std::string seed = p.campaign.value("seed", std::string());
  return fuzz_target(p) + ", seed " + (seed.empty() ? "none" : seed);
}

int merge(const fs::path& out, const std::vector<std::string>& dirs, bool check_only) {
  std::vector<Part> parts;
  for (const auto& d : dirs) parts.push_back(read_part(d));
  // (Before the shares' numbers: two campaigns' 0/2 are not one share given twice.) Whole
  // campaigns of one target may merge; shares merge with their own campaign's.
  const Part* first_share = nullptr;
  for (const auto& p : parts) {
    if (fuzz_target(p) != fuzz_target(parts.front()))
      throw MergeError{"'" + p.dir.string() + "' ran " + fuzz_target(p) + ", '" + parts.front().dir.string() +
                       "' " + fuzz_target(parts.front()) + ": a corpus merges on one op's target"};
    if (p.index < 0) continue;
    if (!first_share) first_share = &p;
    if (campaign_identity(p) != campaign_identity(*first_share))
      throw MergeError{"'" + p.dir.string() + "' is a share of another campaign than '" + first_share->dir.string() +
                       "' (" + campaign_identity(p) + ", against " + campaign_identity(*first_share) +
                       "): merge the shares of one campaign"};
  }
  std::stable_sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) {
    return (a.index < 0 ? INT32_MAX : a.index) < (b.index < 0 ? INT32_MAX : b.index);
  });
  int shard_count = 0;
  std::map<int, const Part*> by_index;
  for (const auto& p : parts) {
    if (p.index < 0) continue;
    if (shard_count && p.count != shard_count)
      throw MergeError{"'" + p.dir.string() + "' is share " + p.label + ", of a campaign of " + std::to_string(p.count) +
                       " shares; the others given are of " + std::to_string(shard_count)};
    shard_count = p.count;
    if (auto [it, fresh] = by_index.emplace(p.index, &p); !fresh)
      throw MergeError{"share " + p.label + " given twice: '" + it->second->dir.string() + "' and '" + p.dir.string() + "'"};
  }
  for (const auto& p : parts)
    if (fs::equivalent(p.dir, out) || (fs::exists(out / "corpus") && fs::equivalent(p.dir, out / "corpus")))
      throw MergeError{"'" + p.dir.string() + "' is the merge's own --out folder"};
  if (check_only) return 0;

  // The report's status: every share there and finished, or why not.
  std::vector<std::string> problems;
  json missing = json::array();
  for (int i = 0; i < shard_count; ++i)
    if (!by_index.count(i)) {
      missing.push_back(i);
      problems.push_back("share " + std::to_string(i) + "/" + std::to_string(shard_count) + " missing");
    }
  for (const auto& p : parts) {
    const std::string status = p.campaign.value("status", std::string("unknown"));
    if (status == "finished") continue;
    const std::string note = p.campaign.value("note", std::string());
    if (status == "running")  // the merge runs after the shares: this one died without its report
      problems.push_back("share " + p.label + " did not finish (its campaign.json still says running: killed or crashed)");
    else
      problems.push_back("share " + p.label + " " + status + (note.empty() ? "" : " (" + note + ")"));
  }

  // Failures: one record per signature, in share order.
  const std::set<std::string> known_before = read_lines(out / "known_signatures.txt");
  std::map<std::string, size_t> at;  // signature -> index in merged
  std::vector<json> merged;
  for (const auto& p : parts)
    for (const auto& r : p.failures) {
      const std::string sig = r.value("signature", std::string());
      if (auto it = at.find(sig); it != at.end()) {
        json& m = merged[it->second];
        if (std::find(m["shards"].begin(), m["shards"].end(), p.label) == m["shards"].end()) m["shards"].push_back(p.label);
        m["records"] = m.value("records", 1) + 1;
        continue;
      }
      json m = r;
      m["new"] = !known_before.count(sig);
      m["shards"] = json::array({p.label});
      m["records"] = 1;
      adopt_case_file(m, p, out);
      at.emplace(sig, merged.size());
      merged.push_back(std::move(m));
    }
  {
    std::ofstream f(out / "failures.jsonl");
    for (const auto& m : merged) f << m.dump() << "\n";
    std::ofstream k(out / "known_signatures.txt", std::ios::app);
    for (const auto& m : merged)
      if (m.value("new", false)) k << m.value("signature", std::string()) << "\n";
  }

  // Per-class counts: the shares' stats files, side by side.
  fs::create_directories(out / "stats");
  for (size_t i = 0; i < parts.size(); ++i)
    if (fs::is_directory(parts[i].dir / "stats"))
      for (const auto& e : fs::directory_iterator(parts[i].dir / "stats"))
        if (e.path().extension() == ".json")
          fs::copy_file(e.path(), out / "stats" / ("part" + std::to_string(i) + "-" + e.path().filename().string()),
                        fs::copy_options::overwrite_existing);
  write_timeline(parts, out);

  // campaign.json: the shares, and the campaign they make together.
  json shares = json::array(), impls = json::array();
  std::set<std::string> impl_seen;
  double hours = 0, seconds = 0, fuzz_seconds = 0;
  int64_t workers = 0, gpus = 0, started = 0, ended = 0;
  for (const auto& p : parts) {
    const json& c = p.campaign;
    for (const auto& i : c.value("impls", json::array()))
      if (i.is_string() && impl_seen.insert(i.get<std::string>()).second) impls.push_back(i);
    hours = std::max(hours, c.value("hours", 0.0));
    seconds = std::max(seconds, c.value("seconds", 0.0));
    fuzz_seconds = std::max(fuzz_seconds, p.fuzz_seconds);
    workers += c.value("workers", int64_t(0));
    gpus += c.value("gpus", int64_t(0));
    const int64_t s = c.value("started", int64_t(0)), e = c.value("ended", int64_t(0));
    if (s && (!started || s < started)) started = s;
    ended = std::max(ended, e);
    const double eps = p.fuzz_seconds > 0 ? double(p.cases) / p.fuzz_seconds : 0.0;
    shares.push_back({{"label", p.label},
                      {"dir", p.dir.string()},
                      {"host", c.value("host", std::string())},
                      {"status", c.value("status", std::string("unknown"))},
                      {"note", c.value("note", std::string())},
                      {"mode", c.value("mode", std::string())},
                      {"workers", c.value("workers", 0)},
                      {"gpus", c.value("gpus", 0)},
                      {"impls", c.value("impls", json::array())},
                      {"seconds", c.value("seconds", 0.0)},
                      {"fuzz_seconds", p.fuzz_seconds},
                      {"cases", p.cases},
                      {"execs_per_s", eps},
                      {"failure_records", p.failures.size()}});
    std::fprintf(stderr, "merge: share %s (%s%s): %lld cases in %.0f s = %.0f exec/s over %d worker(s), %zu failure record(s)\n",
                 p.label.c_str(), c.value("status", std::string("unknown")).c_str(),
                 c.value("host", std::string()).empty() ? "" : (", host " + c.value("host", std::string())).c_str(),
                 (long long)p.cases, p.fuzz_seconds, eps, c.value("workers", 0), p.failures.size());
  }
  std::string note;
  for (const auto& pr : problems) note += (note.empty() ? "" : "; ") + pr;
  const json campaign = {{"mode", "merged"},
                         {"hours", hours},
                         {"seconds", seconds},
                         {"fuzz_seconds", fuzz_seconds},
                         {"workers", workers},
                         {"gpus", gpus},
                         {"impls", impls},
                         {"started", started},
                         {"ended", ended},
                         {"merged_at", int64_t(std::time(nullptr))},
                         {"status", problems.empty() ? "finished" : "incomplete"},
                         {"note", note},
                         {"shard_count", shard_count},
                         {"missing_shards", missing},
                         {"shards", shares}};
  std::ofstream(out / "campaign.json") << campaign.dump(1) << "\n";
  std::fprintf(stderr, "merge: %zu share(s), %zu distinct failure signature(s)%s\n", parts.size(), merged.size(),
               note.empty() ? "" : ("; " + note).c_str());
  std::string list;
  for (const auto& i : impls) list += (list.empty() ? "" : ",") + i.get<std::string>();
  std::cout << "impls " << list << "\nstatus " << campaign["status"].get<std::string>() << "\nnote " << note << std::endl;
  return 0;
}

}  // namespace

int merge_shards(const std::string& out_dir, const std::vector<std::string>& shard_dirs, bool check_only) {
  try {
    if (shard_dirs.empty()) throw MergeError{"no share folders given"};
    fs::create_directories(out_dir);
    return merge(fs::absolute(out_dir).lexically_normal(), shard_dirs, check_only);
  } catch (const MergeError& e) {
    std::fprintf(stderr, "merge: %s\n", e.message.c_str());
    return 2;
  } catch (const fs::filesystem_error& e) {
    std::fprintf(stderr, "merge: %s\n", e.what());
    return 2;
  }
}

}  // namespace gatecheck::fuzz
