// gatecheck check: the property run.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "../../properties/case_json.h"
#include "../../properties/case_snapshot.h"
#include "cli.h"
#include "crash_guard.h"
#include "implementations_from_args.h"
#include "progress.h"
#include "report.h"

namespace gatecheck {

namespace {

void make_dirs(const std::string& path) {
  std::string cur;
  std::stringstream ss(path);
  if (!path.empty() && path[0] == '/') cur = "/";
  for (std::string part; std::getline(ss, part, '/');) {
    if (part.empty()) continue;
    cur += part + "/";
    mkdir(cur.c_str(), 0755);
  }
}

std::string file_safe(const std::string& s) {
  std::string o;
  for (char ch : s) o += (isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_') ? ch : '_';
  if (o.size() > 40) o = o.substr(o.size() - 40);
  return o;
}

// A snapshot left by a run that died: turn it into a readable corpus file.
void recover_inflight(const std::string& inflight, const std::string& corpus) {
  if (access(inflight.c_str(), F_OK) != 0) return;
  try {
    CaseFile f = read_case_file(inflight);
    const std::string out = corpus + "/crash-" + case_digest(f.c) + ".json";
    if (f.failure) f.failure->message = "the process died while running this case (recovered snapshot)";
    write_case_file(out, f);
    std::fprintf(stderr, "gatecheck: an earlier run died mid-case; its case is recovered as %s\n", out.c_str());
    if (f.failure) std::fprintf(stderr, "  repro: %s\n", repro_command(out, f.failure->impl, f.failure->device == "cuda" ? Device::cuda : Device::cpu).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gatecheck: could not recover %s: %s\n", inflight.c_str(), e.what());
  }
  std::remove(inflight.c_str());
}

}  // namespace

int cmd_check(const CheckArgs& a) {
  std::vector<Implementation> impls;
  try {
    impls = implementations_from_args(a.impls, a.device, a.claims);
  } catch (const ImplArgsError& e) {
    std::fprintf(stderr, "gatecheck check: %s\n", e.message.c_str());
    return e.exit_code;
  }
  if (impls.empty()) {
    std::fprintf(stderr, "gatecheck check: no implementation is available for --device %s\n", a.device.c_str());
    return kExitCannotRun;
  }
  CheckOptions opt;
  if (!a.properties.empty()) {
    opt.properties = split_list(a.properties);
    for (const auto& p : opt.properties) {
      bool known = false;
      for (const auto& q : all_properties()) known = known || p == q;
      if (!known) {
        std::fprintf(stderr, "gatecheck check: --properties: unknown property '%s'\n", p.c_str());
        return kExitUsage;
      }
    }
  }
  opt.seed = a.seed_given ? a.seed
                          : uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()) ^ uint64_t(getpid());
  opt.seconds = a.seconds;
  opt.max_cases = a.cases;
  opt.isolate = a.isolate;

  make_dirs(a.corpus);
  const std::string inflight = a.corpus + "/inflight-case.snapshot";
  recover_inflight(inflight, a.corpus);

  std::fprintf(stderr, "gatecheck check: seed %llu (replay this run with --seed %llu), budget %.0f s%s\n",
               static_cast<unsigned long long>(opt.seed), static_cast<unsigned long long>(opt.seed), a.seconds,
               a.cases ? (", " + std::to_string(a.cases) + " cases per property").c_str() : "");

  install_crash_guard();
  opt.before_run = [&](const Implementation& impl, const std::string& property, const Case& c) {
    CaseFile f{c, std::nullopt, {}, ""};
    f.failure = FailureRecord{impl.name, device_name(impl.device), property, "in flight", "", true};
    std::ofstream out(inflight, std::ios::binary | std::ios::trunc);
    out << case_to_snapshot(f);
    out.close();
    set_crash_message("  while " + impl.label() + " ran property " + property + " on " + describe(c) +
                      "\n  the case is saved at " + inflight + "\n  repro: " +
                      repro_command(inflight, impl.name, impl.device) + "\n");
  };
  ProgressLine progress;
  opt.progress = [&](const CheckProgress& p) {
    char buf[256];
    const double left = p.budget_seconds > p.elapsed ? p.budget_seconds - p.elapsed : 0;
    std::snprintf(buf, sizeof buf, "[check] %s %s | %lld cases, %.0f cases/s | %.0f s left | %lld failing",
                  p.impl.c_str(), p.property.c_str(), static_cast<long long>(p.cases_done), p.cases_per_second,
                  left, static_cast<long long>(p.failures));
    progress.update(buf);
  };

  const CheckReport report = run_check(impls, opt);
  progress.finish();
  set_crash_message("");
  std::remove(inflight.c_str());

  SavedFailures saved;
  saved.paths.resize(report.results.size());
  for (size_t k = 0; k < report.results.size(); ++k) {
    const auto& p = report.results[k];
    if (!p.failure) continue;
    const std::string path = a.corpus + "/" + file_safe(p.impl) + "-" + p.property + "-" +
                             case_digest(p.failure->shrunk) + ".json";
    CaseFile f{p.failure->shrunk, std::nullopt, {}, ""};
    f.failure = FailureRecord{p.impl, device_name(p.device), p.property, p.failure->verdict.message,
                              repro_command(path, p.impl, p.device), p.failure->claimed};
    f.note = "found by gatecheck check --seed " + std::to_string(report.seed) + " after " +
             std::to_string(p.failure->seconds_to_find) + " s; shrunk in " +
             std::to_string(p.failure->shrink_steps) + " steps from " + describe(p.failure->original);
    try {
      write_case_file(path, f);
      saved.paths[k] = path;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gatecheck check: could not save the counterexample: %s\n", e.what());
    }
  }

  print_table(std::cout, report, impls);
  print_failures(std::cout, report, saved);
  print_coverage(std::cout, report.coverage);
  int claimed = 0, findings = 0;
  for (const auto& p : report.results)
    if (p.failure) (p.failure->claimed ? claimed : findings)++;
  std::cout << "\nseed " << report.seed << ", " << report.seconds << " s: " << claimed
            << " claimed propert" << (claimed == 1 ? "y" : "ies") << " failed, " << findings << " finding"
            << (findings == 1 ? "" : "s") << " on unclaimed properties\n";

  if (!a.json.empty()) {
    std::ofstream out(a.json);
    out << report_json(report, saved, impls).dump(1) << "\n";
    if (!out) {
      std::fprintf(stderr, "gatecheck check: could not write %s\n", a.json.c_str());
      return kExitUsage;
    }
  }
  return claimed ? kExitFailure : kExitOk;
}

}  // namespace gatecheck
