// gatecheck check: the property run.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "../case/case_json.h"
#include "../properties/engine/check_workers.h"
#include "../properties/generate/generators.h"
#include "../properties/shrink/shrink.h"
#include "cli.h"
#include "../findings/failure_files.h"
#include "../findings/inflight_recovery.h"
#include "../findings/inflight_snapshots.h"
#include "../findings/second_shrink.h"
#include "crash_guard.h"
#include "implementations_from_args.h"
#include "line_writer.h"
#include "progress.h"
#include "stop_signal.h"
#include "report.h"
#include "scale_cli.h"
#include "../properties/engine/scale_check.h"

namespace gatecheck {

namespace {

// The generator options of this run, as a replay of its RapidCheck reproduce
// strings must repeat them (the strings are shrink paths of this generator).
std::string generator_flags(const CheckArgs& a) {
  std::string f;
  if (a.op != kDefaultOp) f += " --op " + a.op;
  if (a.max_rows) f += " --max-rows " + std::to_string(a.max_rows);
  if (a.max_dim) f += " --max-dim " + std::to_string(a.max_dim);
  if (a.max_gates) f += " --max-gates " + std::to_string(a.max_gates);
  if (a.min_rows) f += " --min-rows " + std::to_string(a.min_rows);
  if (a.min_dim) f += " --min-dim " + std::to_string(a.min_dim);
  if (a.min_gates) f += " --min-gates " + std::to_string(a.min_gates);
  return f.empty() ? f : f.substr(1);
}

// --max-rows, --max-dim, --max-gates, --min-rows, --min-dim and --min-gates
// into *l; "" or what is wrong with them.
std::string apply_generator_limits(const CheckArgs& a, GenLimits* l) {
  if (a.max_rows) l->max_rows = a.max_rows;
  if (a.max_gates) l->max_gates = a.max_gates;
  if (a.max_dim) {
    l->max_dim = a.max_dim;
    // Wide dims are drawn for small cases whatever max_dim says; a lower
    // --max-dim means no dim above it.
    l->big_dim_max = std::min<int64_t>(l->big_dim_max, a.max_dim);
    l->big_dims = l->big_dims && *std::min_element(edges::big_dims().begin(), edges::big_dims().end()) <= l->big_dim_max;
  }
  l->min_rows = a.min_rows;
  l->min_dim = a.min_dim;
  l->min_gates = a.min_gates;
  // "" if min <= max, else what is wrong, naming both (and whether max is the default).
  auto above = [](const char* what, const char* noun, int64_t min, int64_t max, bool max_given) -> std::string {
    if (min <= max) return "";
    return std::string("--min-") + what + " " + std::to_string(min) + " is above the largest " + noun +
           " generated, " + std::to_string(max) +
           (max_given ? std::string(" (--max-") + what + ")" : std::string(" (the default; raise --max-") + what + ")");
  };
  for (const std::string& why : {above("rows", "row count", l->min_rows, l->max_rows, a.max_rows != 0),
                                 above("gates", "gate count", l->min_gates, l->max_gates, a.max_gates != 0),
                                 above("dim", "dim", l->min_dim, l->max_dim, a.max_dim != 0)})
    if (!why.empty()) return why;
  const unsigned long long elements = (unsigned long long)l->max_rows * (unsigned long long)l->max_dim;
  if (elements <= kMaxGenElements) return "";
  return "--max-rows " + std::to_string(l->max_rows) + " x --max-dim " + std::to_string(l->max_dim) + " is " +
         std::to_string(elements) + " elements a tensor; at most " + std::to_string(kMaxGenElements) +
         " (the oracle holds several float64 copies of every tensor)";
}

// The run's first line: its seed and budgets, with what replays it, or the
// pairs it replays from RC_PARAMS (which use no seed or budget of this run's).
void print_header(const CheckArgs& a, uint64_t seed, const std::vector<std::string>& replays, int jobs) {
  if (!replays.empty()) {
    std::string pairs;
    for (const auto& k : replays) pairs += (pairs.empty() ? "" : ", ") + k;
    std::fprintf(stderr, "gatecheck check: replay of the RC_PARAMS reproduce string (%s)\n", pairs.c_str());
    return;
  }
  std::ostringstream budget;
  if (a.seconds > 0) budget << "budget " << a.seconds << " s";
  else budget << "no time budget";
  if (a.cases || a.seconds <= 0) budget << ", " << (a.cases ? a.cases : kCasesWithoutBudget) << " cases per property";
  const std::string flags = generator_flags(a);
  std::fprintf(stderr, "gatecheck check: seed %llu (replay this run with --seed %llu%s), %s, %d job%s\n",
               static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed),
               flags.empty() ? "" : (" " + flags).c_str(), budget.str().c_str(), jobs, jobs == 1 ? "" : "s");
}

}  // namespace

int cmd_check(const CheckArgs& a) {
  // Before the implementations load (a Python one imports its modules, which
  // can take seconds): a Ctrl-C then stops the run before its first case.
  install_stop_handlers();
  // --properties before the implementations load: a typo must not wait for a Python import.
  std::vector<std::string> chosen;
  if (!a.properties.empty()) {
    std::string problem;
    chosen = property_list("--properties", a.properties, find_op_schema(a.op), &problem);
    if (!problem.empty()) {
      std::fprintf(stderr, "gatecheck check: %s\n", problem.c_str());
      return kExitUsage;
    }
  }
  GenLimits gen_limits;
  if (const std::string why = apply_generator_limits(a, &gen_limits); !why.empty()) {
    std::fprintf(stderr, "gatecheck check: %s\n", why.c_str());
    return kExitUsage;
  }
  const bool json_to_stdout = a.json == "-" || a.json == "/dev/stdout";
  if (!a.json.empty() && !json_to_stdout && !writable_path(a.json)) {  // before the run, not after it
    std::fprintf(stderr, "gatecheck check: --json %s: cannot write there (%s)\n", a.json.c_str(), std::strerror(errno));
    return kExitUsage;
  }
  make_dirs(a.corpus);
  if (!writable_folder(a.corpus)) {
    std::fprintf(stderr, "gatecheck check: --corpus %s: cannot write there (%s); counterexamples could not be saved\n",
                 a.corpus.c_str(), std::strerror(errno));
    return kExitUsage;
  }
  std::vector<Subject> impls;
  try {
    impls = implementations_from_args(a.impls, a.device, a.claims, a.valid, a.op, a.load_timeout);
  } catch (const ImplArgsError& e) {
    std::fprintf(stderr, "gatecheck check: %s\n", e.message.c_str());
    return e.exit_code;
  }
  if (impls.empty()) {
    std::fprintf(stderr, "gatecheck check: no implementation of %s is available for --device %s\n", a.op.c_str(),
                 a.device.c_str());
    return kExitCannotRun;
  }
  const OpSchema& op = *impls.front().op;
  CheckOptions opt;
  opt.properties = chosen.empty() ? default_properties_for(op) : chosen;
  opt.limits = gen_limits;
  for (const auto& impl : impls) {  // a run that cannot fail should say so
    bool any = false;
    for (const auto& prop : opt.properties) any = any || claimed_for_some_dtype(impl.contract, prop, opt.limits.dtypes);
    if (!any)
      std::fprintf(stderr, "gatecheck check: note: %s claims none of the properties run (%s), so its failures "
                           "are findings and cannot fail this run\n", impl.label().c_str(), impl.contract.describe().c_str());
    for (const auto& prop : opt.properties)  // a claim the implementation's ABI cannot keep should say so
      if (const char* how = property_info(prop).without_exchange;
          how && !impl.has_exchange() && claimed_for_some_dtype(impl.contract, prop, opt.limits.dtypes))
        std::fprintf(stderr, "gatecheck check: note: %s claims %s but declares no split exchange: %s\n",
                     impl.label().c_str(), prop.c_str(), how);
  }
  opt.seed = a.seed_given ? a.seed
                          : uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()) ^ uint64_t(getpid());
  opt.seconds = a.seconds;
  opt.max_shrink_seconds = a.shrink_seconds;
  opt.max_cases = a.cases;
  opt.isolate = a.isolate;
  opt.isolate_timeout_seconds = a.timeout;
  opt.jobs = a.jobs > 0 ? int(a.jobs) : default_check_jobs();
  configure_scale(a, &opt);  // the scale tier (scale_cli.h)

  // "--json -" (or /dev/stdout): the JSON alone on stdout, the report on
  // stderr. Through std::cout, which stays the real stdout after a plugin has
  // loaded (fd 1 is stderr then, so opening /dev/stdout would reach stderr).
  LineWriter stderr_lines(STDERR_FILENO);  // a line a write: a plugin's thread may write there too
  std::ostream& report_out = json_to_stdout ? static_cast<std::ostream&>(stderr_lines) : std::cout;
  recover_inflight(a.corpus);

  // RC_PARAMS="reproduce=..." replays the cases it encodes: no seed or budget
  // of this run's is used, so none is shown.
  const std::vector<std::string> replays = rc_params_replays(impls, opt);
  const std::string limits = generator_flags(a);
  const std::string origin = replays.empty() ? "--seed " + std::to_string(opt.seed) + (limits.empty() ? "" : " " + limits)
                                             : "replaying the RC_PARAMS reproduce string";
  print_header(a, opt.seed, replays, opt.jobs);
  if (replays.empty()) std::fprintf(stderr, "%s\n", scale_header(opt, impls).c_str());

  // The case goes to disk before every call, one file per worker: a crash or
  // an exit() inside the implementation names it, and the next run recovers it.
  const InflightSnapshots inflight(a.corpus, opt.jobs, set_crash_message);
  inflight.attach(&opt);
  if (!a.isolate) watchdog_arm(a.timeout);  // under --isolate the child's timeout does this
  ProgressLine progress;
  opt.progress = [&](const CheckProgress& p) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "[check] %s %s | %lld cases, %.0f cases/s | %.0f s left | %lld failing",
                  p.impl.c_str(), p.property.c_str(), static_cast<long long>(p.cases_done), p.cases_per_second,
                  p.seconds_left, static_cast<long long>(p.failures));
    progress.update(buf);
  };

  opt.stop_requested = stop_requested;
  CheckReport report = run_check(impls, opt);
  progress.finish();
  clear_crash_messages();
  // The project's shrinker after RapidCheck's: up to 10 s each, within --shrink-seconds. After a
  // stop it shrinks nothing and marks each failure's shrink cut short.
  if (a.shrink_seconds > 0)
    shrink_failures_further(&report, impls, opt.before_run, PropertyOptions{a.isolate, a.timeout},
                            opt.stop_requested, std::min(10.0, a.shrink_seconds));
  clear_crash_messages();
  inflight.remove_all();

  const SavedFailures saved = save_failures(report, a.corpus, origin, [](const std::string& why) {
    std::fprintf(stderr, "gatecheck check: %s\n", why.c_str());
  });

  print_table(report_out, report, impls);
  print_failures(report_out, report, saved, generator_flags(a));
  print_coverage(report_out, report.coverage);
  int claimed = 0, findings = 0;
  for (const auto& p : report.results)
    if (p.failure) (p.failure->claimed ? claimed : findings)++;
  if (report.interrupted)
    report_out << "\n" << stop_words() << ": the results above cover only what ran before it";
  if (report.stopped_on_failure)
    report_out << "\n--stop-on-failure: the run ended at its first claimed failure; the results cover what ran before it";
  report_out << "\n" << (replays.empty() ? "seed " + std::to_string(report.seed) : "replay of the RC_PARAMS reproduce string")
            << ", " << report.seconds << " s: " << claimed
            << " claimed propert" << (claimed == 1 ? "y" : "ies") << " failed, " << findings << " finding"
            << (findings == 1 ? "" : "s") << " on unclaimed properties\n";
  int inconclusive = 0;
  for (const auto& p : report.results) inconclusive += p.inconclusive();
  if (inconclusive)
    report_out << inconclusive << " claimed propert" << (inconclusive == 1 ? "y" : "ies") << " inconclusive: fewer than "
               << kCaseFloor << " cases ran, so "  << (inconclusive == 1 ? "its" : "their")
               << " pass would mean little (give it more --seconds or fewer properties)\n";

  report_out.flush();
  if (json_to_stdout) {
    std::cout << report_json(report, saved, impls, replays, opt.limits)
                     .dump(1, ' ', false, nlohmann::json::error_handler_t::replace)  // an implementation's bytes
              << "\n" << std::flush;
    if (!std::cout) {
      std::fprintf(stderr, "gatecheck check: could not write the JSON to stdout\n");
      return kExitUsage;
    }
  } else if (!a.json.empty()) {
    std::ofstream out(a.json);
    out << report_json(report, saved, impls, replays, opt.limits)
               .dump(1, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
    if (!out) {
      std::fprintf(stderr, "gatecheck check: could not write %s\n", a.json.c_str());
      return kExitUsage;
    }
  }
  if (report.interrupted) return stop_exit_code();
  if (claimed) return kExitFailure;
  return inconclusive ? kExitInconclusive : kExitOk;
}

}  // namespace gatecheck
