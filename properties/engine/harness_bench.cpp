#include "harness_bench.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "check_engine.h"
#include "check_workers.h"

namespace gatecheck {

namespace {

HarnessBenchRow bench_one(const Subject& impl, const std::string& property, int jobs, const HarnessBenchOptions& o) {
  CheckOptions opt;
  opt.properties = {property};
  opt.seed = o.seed;
  opt.seconds = o.cases_per_property > 0 ? 0 : o.seconds_per_property;
  opt.max_cases = o.cases_per_property;
  opt.limits = o.limits;
  opt.max_shrink_seconds = 0;  // a bench measures checking, not shrinking
  opt.jobs = jobs;
  opt.isolate = o.isolate;
  opt.isolate_timeout_seconds = o.isolate_timeout_seconds;
  opt.before_run = o.before_run;
  opt.after_run = o.after_run;
  // Untimed first: a case per worker thread, so that what a check pays once
  // (a Python door's first CUDA calls took 2.3 s; error_inputs' probe worker
  // for a Python implementation on CUDA starts Python, torch and CUDA) is not
  // billed to a few seconds of cases. Such workers outlive the threads, for the next.
  CheckOptions warm = opt;
  warm.seed = o.seed ^ 0x9e3779b97f4a7c15ull;  // not the timed cases
  warm.seconds = 0;
  warm.max_cases = jobs;
  run_check({impl}, warm);
  const CheckReport rep = run_check({impl}, opt);
  HarnessBenchRow row;
  row.impl = impl.label();
  row.property = property;
  row.jobs = jobs;
  for (const auto& r : rep.results) {
    row.cases += r.cases;
    row.seconds += r.seconds;
    row.passed = row.passed && r.passed;
    row.stages += r.stages;
    row.worker_seconds += r.worker_seconds;
  }
  row.cases_per_second = row.seconds > 0 ? double(row.cases) / row.seconds : 0;
  return row;
}

int parallel_jobs(const HarnessBenchOptions& o) { return o.jobs > 0 ? o.jobs : default_check_jobs(); }

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

// The implementation column fits the longest label.
int impl_width(const std::vector<HarnessBenchRow>& rows) {
  int w = 20;
  for (const auto& r : rows) w = std::max(w, int(r.impl.size()) + 2);
  return w;
}

// With --jobs 1 the figure is its own reference: one column, measured once.
void print_throughput(std::ostream& out, const std::vector<HarnessBenchRow>& rows, int jobs) {
  const bool pairs = jobs != 1;
  const std::string jn = "--jobs " + std::to_string(jobs);
  const int w = impl_width(rows);
  out << std::left << std::setw(w) << "impl" << std::setw(20) << "property" << std::right << std::setw(14)
      << "--jobs 1";
  if (pairs) out << std::setw(14) << jn << std::setw(10) << "speed-up" << std::setw(10) << "cases";
  out << std::setw(10) << "cases" << "\n";
  out << std::left << std::setw(w + 20) << "" << std::right << std::setw(14) << "cases/s";
  if (pairs) out << std::setw(14) << "cases/s" << std::setw(10) << "" << std::setw(10) << "--jobs 1" << std::setw(10) << jn;
  out << "\n";
  double sum1 = 0, sumn = 0;
  int n = 0;
  const size_t step = pairs ? 2 : 1;
  for (size_t i = 0; i + step <= rows.size(); i += step) {
    const HarnessBenchRow& a = rows[i];
    const HarnessBenchRow& b = rows[i + step - 1];
    sum1 += a.cases_per_second;
    sumn += b.cases_per_second;
    ++n;
    out << std::left << std::setw(w) << a.impl << std::setw(20) << a.property << std::right << std::setw(14)
        << fixed(a.cases_per_second, 1);
    if (pairs)
      out << std::setw(14) << fixed(b.cases_per_second, 1) << std::setw(9)
          << (a.cases_per_second > 0 ? fixed(b.cases_per_second / a.cases_per_second, 2) : "-") << "x"
          << std::setw(10) << a.cases;
    out << std::setw(10) << b.cases << (a.passed && b.passed ? "" : "  (failed during bench)") << "\n";
  }
  if (n > 0) {
    out << std::left << std::setw(w + 20) << "mean over the properties" << std::right << std::setw(14) << fixed(sum1 / n, 1);
    if (pairs) out << std::setw(14) << fixed(sumn / n, 1) << std::setw(9) << (sum1 > 0 ? fixed(sumn / sum1, 2) : "-") << "x";
    out << "\n";
  }
}

void print_breakdown(std::ostream& out, const std::vector<HarnessBenchRow>& rows) {
  out << "\nwhere a case's time goes: microseconds of worker time per case, by stage (docs/parallel.md);\n"
         "'other' is what no stage timed, 'largest' the largest stage's share of the total\n";
  const int w = impl_width(rows);
  out << std::left << std::setw(w) << "impl" << std::setw(20) << "property" << std::right << std::setw(5) << "jobs";
  for (int s = 0; s < kStageCount; ++s) out << std::setw(s == int(Stage::bookkeeping) ? 12 : 9) << stage_name(Stage(s));
  out << std::setw(9) << "other" << std::setw(10) << "total" << "  largest\n";
  for (const auto& r : rows) {
    const double per = r.cases > 0 ? 1e6 / double(r.cases) : 0;
    out << std::left << std::setw(w) << r.impl << std::setw(20) << r.property << std::right << std::setw(5) << r.jobs;
    int top = 0;
    for (int s = 0; s < kStageCount; ++s) {
      out << std::setw(s == int(Stage::bookkeeping) ? 12 : 9) << fixed(r.stages.seconds[s] * per, 1);
      if (r.stages.seconds[s] > r.stages.seconds[top]) top = s;
    }
    const double other = std::max(0.0, r.worker_seconds - r.stages.total());
    out << std::setw(9) << fixed(other * per, 1) << std::setw(10) << fixed(r.worker_seconds * per, 1) << "  ";
    if (r.worker_seconds > 0)
      out << (other > r.stages.seconds[top] ? std::string("other") : std::string(stage_name(Stage(top)))) << " "
          << fixed(100 * std::max(other, r.stages.seconds[top]) / r.worker_seconds, 0) << "%";
    out << "\n";
  }
}

nlohmann::json to_json(const std::vector<HarnessBenchRow>& rows, const HarnessBenchOptions& o, int jobs) {
  nlohmann::json j;
  if (o.cases_per_property > 0)
    j["cases_per_property"] = o.cases_per_property;
  else
    j["seconds_per_property"] = o.seconds_per_property;
  j["seed"] = o.seed;
  j["max_rows"] = o.limits.max_rows;
  j["max_dim"] = o.limits.max_dim;
  j["jobs"] = jobs;
  j["isolate"] = o.isolate;
  j["cores"] = default_check_jobs();
  j["rows"] = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json x{{"impl", r.impl},       {"property", r.property}, {"jobs", r.jobs},
                     {"cases", r.cases},     {"seconds", r.seconds},   {"cases_per_second", r.cases_per_second},
                     {"passed", r.passed},   {"worker_seconds", r.worker_seconds}};
    nlohmann::json st;
    for (int s = 0; s < kStageCount; ++s) st[stage_name(Stage(s))] = r.stages.seconds[s];
    st["other"] = std::max(0.0, r.worker_seconds - r.stages.total());
    x["stage_seconds"] = st;
    j["rows"].push_back(x);
  }
  return j;
}

}  // namespace

std::vector<HarnessBenchRow> harness_bench(const std::vector<Subject>& impls, const HarnessBenchOptions& o) {
  const int jobs = parallel_jobs(o);
  const size_t per_property = jobs != 1 ? 2 : 1, per_impl = o.properties.size() * per_property;
  std::vector<HarnessBenchRow> rows(impls.size() * per_impl);
  // Property by property, each implementation in turn: the figures to be
  // compared are taken close together, on the machine as it is then (a
  // shared host's speed drifts over a run). Listed by implementation.
  for (size_t p = 0; p < o.properties.size(); ++p)
    for (size_t i = 0; i < impls.size(); ++i) {
      const size_t at = i * per_impl + p * per_property;
      rows[at] = bench_one(impls[i], o.properties[p], 1, o);
      if (jobs != 1) rows[at + 1] = bench_one(impls[i], o.properties[p], jobs, o);
    }
  return rows;
}

int run_harness_bench(const std::vector<Subject>& impls_in, const HarnessBenchOptions& o, std::ostream& out,
                      const std::string& json) {
  std::vector<Subject> impls = impls_in;
  if (impls.empty()) impls.push_back(make_subject("host", Device::cpu));
  const int jobs = parallel_jobs(o);
  std::ofstream json_file;
  if (!json.empty() && json != "-") {
    json_file.open(json);
    if (!json_file) {
      out << "gatecheck bench --harness: --json " << json << ": cannot write there (" << std::strerror(errno) << ")\n";
      return 2;
    }
  }
  std::vector<HarnessBenchRow> rows;
  try {
    rows = harness_bench(impls, o);
  } catch (const std::invalid_argument& e) {
    out << "bench --harness: " << e.what() << "\n";
    return 2;
  }
  if (json == "-") {
    out << to_json(rows, o, jobs).dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return 0;
  }
  out << "harness throughput (";
  if (o.cases_per_property > 0)
    out << o.cases_per_property << " cases per property and jobs count, the same for each implementation";
  else
    out << o.seconds_per_property << " s per property and jobs count";
  out << ", seed " << o.seed
      << ", max rows " << o.limits.max_rows << ", max dim " << o.limits.max_dim << (o.isolate ? ", --isolate" : "")
      << "; " << (jobs == 1 ? std::string("--jobs 1") : "--jobs " + std::to_string(jobs) + " beside --jobs 1")
      << ", on " << default_check_jobs() << " cores)\n";
  print_throughput(out, rows, jobs);
  print_breakdown(out, rows);
  if (json_file.is_open()) {
    json_file << to_json(rows, o, jobs).dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    if (!json_file) {
      out << "bench --harness: could not write " << json << "\n";
      return 2;
    }
  }
  return 0;
}

}  // namespace gatecheck
