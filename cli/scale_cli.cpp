#include "scale_cli.h"

#include <cmath>
#include <cstdio>
#include <iomanip>
#include <set>
#include <sstream>

#include "../properties/engine/scale_check.h"

namespace gatecheck {

void configure_scale(const CheckArgs& a, CheckOptions* opt) {
  opt->scale.enabled = true;
  opt->scale.share = a.scale_share;
  // Scale cases run in gatecheck's own process (their buffers live there), so
  // under --isolate the tier is off unless --scale-share asks for it.
  if (a.isolate && a.scale_share < 0) opt->scale.share = 0;
  opt->scale.memory_bytes = uint64_t(a.scale_memory_gib) << 30;
  opt->stop_on_failure = a.stop_on_failure;
}

std::string scale_header(const CheckOptions& opt, const std::vector<Subject>& impls) {
  std::set<Device> devices;
  for (const auto& i : impls) devices.insert(i.device);
  std::ostringstream s;
  s << "scale tier: ";
  bool first = true;
  for (Device d : devices) {
    const double share = scale_share_for(opt.scale, d);
    s << (first ? "" : ", ") << std::lround(share * 100) << "% of each " << device_name(d) << " budget";
    first = false;
  }
  s << " (--scale-share; docs/scale.md)";
  if (opt.isolate && opt.scale.share == 0) s << "; off under --isolate: its cases run in this process";
  return s.str();
}

void write_scale_inflight(const std::string& path, const Subject& impl, const std::string& property,
                          const ScaleCase& c, const std::string& repro) {
  CaseFile f;
  f.scale = ScaleFileCase{c.spec, c.view};
  f.failure = FailureRecord{impl.name, device_name(impl.device), property, "in flight", repro, true, ""};
  try {
    write_case_file(path, f);
  } catch (const CaseFileError&) {
    // as for small cases: the crash message then says the case could not be saved
  }
}

namespace {
std::string grouped(int64_t n) {
  std::string s = std::to_string(n);
  for (int i = int(s.size()) - 3; i > 0; i -= 3) s.insert(size_t(i), ",");
  return s;
}
// Cases past 4,096 columns, and those of them whose dim is not a multiple of 8.
std::pair<int64_t, int64_t> past_tile(const std::map<int64_t, int64_t>& dims) {
  int64_t past = 0, odd = 0;
  for (const auto& [dim, n] : dims) {
    if (dim <= kWideDimEdge) continue;
    past += n;
    if (dim % 8) odd += n;
  }
  return {past, odd};
}
}  // namespace

std::string wide_dims_text(const std::map<int64_t, int64_t>& dims) {
  if (dims.empty()) return "none";
  std::string s;
  for (const auto& [dim, n] : dims) s += (s.empty() ? "" : ", ") + std::to_string(dim) + " x" + std::to_string(n);
  const auto [past, odd] = past_tile(dims);
  return s + "; past 4,096: " + grouped(past) + (past == 1 ? " case, " : " cases, ") + grouped(odd) +
         " not a multiple of 8";
}

nlohmann::json wide_dims_json(const std::map<int64_t, int64_t>& dims) {
  nlohmann::json by_dim = nlohmann::json::object();
  for (const auto& [dim, n] : dims) by_dim[std::to_string(dim)] = n;
  const auto [past, odd] = past_tile(dims);
  return {{"by_dim", by_dim}, {"past_4096", past}, {"past_4096_not_multiple_of_8", odd}};
}

void print_scale_coverage(std::ostream& os, const ScaleCoverage& c) {
  if (c.shares.empty()) return;
  os << "\nscale tier (";
  bool first = true;
  for (const auto& [dev, share] : c.shares) {
    os << (first ? "" : ", ") << std::lround(share * 100) << "% of each " << dev << " budget";
    first = false;
  }
  os << "): " << c.cases << " cases in " << std::fixed << std::setprecision(1) << c.seconds << " s\n";
  if (c.cases > 0) {
    os << "  largest   rows " << grouped(c.max_rows) << ", dim " << grouped(c.max_dim) << ", segment "
       << grouped(c.max_segment) << " rows, elements " << grouped(c.max_elements) << "\n";
    os << "  past      ";
    first = true;
    for (const auto& e : scale_edges()) {
      const auto it = c.past.find(e);
      const int64_t n = it == c.past.end() ? 0 : it->second;
      os << (first ? "" : ", ") << e << " " << std::lround(100.0 * double(n) / double(c.cases)) << "%";
      first = false;
    }
    os << "\n  rungs    ";
    for (const auto& [rung, n] : c.rungs) os << " " << rung << " " << n;
    os << "\n  wide dim  " << wide_dims_text(c.wide_dims) << "\n";
  }
  for (const auto& [why, n] : c.skipped) os << "  skipped   " << n << " drawn cases: " << why << "\n";
  for (const auto& [dev, note] : c.notes) os << "  past 2^31 elements on the " << dev << ": " << note << "\n";
}

nlohmann::json scale_coverage_json(const ScaleCoverage& c) {
  return {{"shares", c.shares},   {"cases", c.cases},           {"seconds", c.seconds},
          {"max_rows", c.max_rows}, {"max_dim", c.max_dim},     {"max_segment", c.max_segment},
          {"max_elements", c.max_elements}, {"past", c.past},  {"rungs", c.rungs},
          {"skipped", c.skipped}, {"notes", c.notes}, {"wide_dims", wide_dims_json(c.wide_dims)}};
}

}  // namespace gatecheck
