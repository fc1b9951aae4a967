// gatecheck sweep: the prior art's report for any implementation
// (properties/sweep.h computes it; this writes it, renders it, compares it).
#include <CLI/CLI.hpp>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <set>
#include <sstream>

#include "../sweep/sweep_timing.h"
#include "../case/case_json.h"
#include "cli.h"
#include "../findings/failure_files.h"
#include "../findings/repro_command.h"
#include "crash_guard.h"
#include "implementations_from_args.h"
#include "../sweep/json_path.h"
#include "report.h"
#include "stop_signal.h"
#include "../sweep/sweep_compare.h"
#include "../sweep/sweep_html.h"
#include "../sweep/sweep_json.h"
#include "../sweep/sweep_fields.h"
#include "../sweep/sweep_schema.h"
#include "../oracles/op_oracles.h"
#include "validators.h"

namespace gatecheck {

using nlohmann::json;

void add_sweep_options(CLI::App* w, SweepArgs* a) {
  w->add_option("--impl", a->impls,
                "implementation: host, cuda, torch-eager, host-repro, cuda-repro, plugin:PATH, python:TARGET where built (repeatable)");
  w->add_option("--device", a->device, "cpu or cuda (default: cuda for --impl cuda, else cpu)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  w->add_flag("--quick", a->quick,
              "the prior art's own --quick batch sizes, accuracy and latency at rows/16, dim/16: seconds for "
              "CPU implementations (the report says exactly what changed)");
  w->add_option("--json", a->json,
                "write the report here (required); '-' (or /dev/stdout): the report alone on stdout, the summary "
                "on stderr");
  w->add_option("--html", a->html, "also write it as one self-contained page");
  w->add_option("--compare", a->compare,
                "another report (the seed's, bench/reference/h3_prior_art_b200.json, or an earlier sweep) to put "
                "beside ours, field by field");
  w->add_option("--corpus", a->corpus, "where the cases that replay failed comparisons are saved")->capture_default_str();
  w->add_option("--keep-failures", a->keep_failures,
                "failed comparisons listed with where they differ and saved as cases, per check and implementation "
                "(0: every one)")
      ->capture_default_str()
      ->check(whole_number(1000000, "failures"));
  w->add_flag("--skip-unavailable", a->skip_unavailable,
              "list an implementation that cannot run here (no GPU, a plugin that will not load) as unavailable "
              "and sweep the others, instead of exiting 3");
  w->add_option("--timeout", a->timeout,
                "seconds without progress (a phase of one implementation) before the sweep counts as hung: it then "
                "ends (exit 3) with the phase named and the report of the phases before")
      ->capture_default_str()
      ->check(finite_seconds(true));
  add_load_timeout_option(w, &a->load_timeout);
  w->add_option("--reps", a->reps,
                "latency: the median of this many timed runs, after a fifth as many warm-ups (default: the prior "
                "art's 100, 25 with --quick); 0: no latency, the accuracy and invariance fields only")
      ->check(whole_number(100000, "runs"));
  w->add_option("--validate", a->validate,
                "check reports against the seed report's schema and their grid's counts and run nothing (exit 0: "
                "each conforms; 1: one does not, with every problem named)");
}

namespace {

int usage(const std::string& msg) {
  std::fprintf(stderr, "gatecheck sweep: %s\n", msg.c_str());
  return kExitUsage;
}

bool read_json(const std::string& path, json* out, std::string* why) {
  std::ifstream f(path);
  if (!f) {
    *why = std::strerror(errno);
    return false;
  }
  try {
    *out = json::parse(f);
  } catch (const json::exception& e) {
    *why = std::string("not valid JSON: ") + e.what();
    return false;
  }
  return true;
}

// An existing path that is not a regular file (/dev/stdout, a pipe): written
// in place, never replaced by a rename.
bool special_file(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
}

// A regular file is written whole to FILE.tmp, then renamed over FILE, so
// that a crash never leaves half a report.
bool write_text(const std::string& path, const std::string& text) {
  if (special_file(path)) {
    std::ofstream f(path, std::ios::binary);
    return bool(f << text) && bool(f.flush());
  }
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary);
    if (!(f << text) || !f.flush()) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

int validate(const std::string& path) {
  json r;
  std::string why;
  if (!read_json(path, &r, &why)) return usage("--validate " + path + ": " + why);
  std::cout.flush();
  const auto problems = sweep_schema_problems(r);
  const bool quick = r.is_object() && r.value("quick", false);
  if (r.is_object() && r.value("kind", "") == kOperatorReportKind) {  // their form: no grid to count
    if (problems.empty()) std::cout << path << ": follows the operator report's schema\n";
    else std::cout << path << ": " << problems.size() << " problem(s) against the operator report's schema:\n";
    for (const auto& p : problems) std::cout << "  " << p << "\n";
    return problems.empty() ? kExitOk : kExitFailure;
  }
  if (problems.empty()) {
    std::cout << path << ": follows the seed report's schema, with the counts of the " << (quick ? "--quick" : "full")
              << " grid\n";
    return kExitOk;
  }
  std::cout << path << ": " << problems.size() << " problem" << (problems.size() == 1 ? "" : "s")
            << " against the seed report's schema and the " << (quick ? "--quick" : "full") << " grid's counts:\n";
  for (const auto& p : problems) std::cout << "  " << p << "\n";
  return kExitFailure;
}

std::string command_line(const SweepArgs& a) {
  std::string c = "gatecheck sweep";
  if (a.op != gate_residual_schema().name) c += " --op " + a.op;
  for (const auto& i : a.impls) c += " --impl " + i;
  if (!a.device.empty()) c += " --device " + a.device;
  if (a.quick) c += " --quick";
  if (a.reps >= 0) c += " --reps " + std::to_string(a.reps);
  // What else shapes the report or its replays (the defaults left out).
  const SweepArgs defaults;
  if (a.keep_failures != defaults.keep_failures) c += " --keep-failures " + std::to_string(a.keep_failures);
  if (a.skip_unavailable) c += " --skip-unavailable";
  if (a.timeout != defaults.timeout) {
    std::ostringstream t;
    t << a.timeout;
    c += " --timeout " + t.str();
  }
  if (a.corpus != defaults.corpus) c += " --corpus " + a.corpus;
  c += " --json " + a.json;
  if (!a.html.empty()) c += " --html " + a.html;
  if (!a.compare.empty()) c += " --compare " + a.compare;
  return c;
}

// The verdicts, implementations as columns, and the seed's numbers.
void print_summary(std::ostream& os, const json& r, const OpSchema& op) {
  const json plain = value_at(r, {"results", "plain"});
  std::vector<std::string> impls;
  size_t w = 14;
  for (const auto& [k, v] : plain.items()) {
    impls.push_back(k);
    w = std::max(w, k.size() + 2);
  }
  os << "\n" << std::left << std::setw(28) << "check";
  for (const auto& i : impls) os << std::setw(int(w)) << i;
  os << "\n" << std::string(28 + w * impls.size(), '-') << "\n";
  auto row = [&](const std::string& name, const std::function<std::string(const json&)>& cell) {
    os << std::setw(28) << name;
    for (const auto& i : impls) os << std::setw(int(w)) << (plain[i].contains("unavailable") ? "unavailable" : cell(plain[i]));
    os << "\n";
  };
  for (const char* v : {"batch_invariant", "all_rows", "params_repeatable", "full_vs_sub_batches", "batch_size_sweep",
                        "segment_invariance", "split_invariance", "accuracy", "eager_exact"})
    row(v, [&](const json& e) {
      const json word = value_at(e, {"gatecheck", "verdicts", v});
      std::string s = word.is_string() ? word.get<std::string>() : "?";
      const json n = value_at(e, {"gatecheck", "failed_comparisons", v});
      if (n.is_number()) s += " (" + std::to_string(n.get<int64_t>()) + ")";
      return s;
    });
  auto fmt = [](const json& v) {
    if (!v.is_number()) return std::string("-");
    std::ostringstream s;
    s << std::setprecision(4) << v.get<double>();
    return s.str();
  };
  // The operator report's own verdicts, where the op's prior art has one.
  if (op.prior_art_operator_report)
    for (const char* v : {"rows_batch_invariant", "repeat_bitwise_equal"})
      row(v, [&](const json& e) { return value_at(e, {"operator_report", v}).dump(); });
  if (op.prior_art_operator_report && op.plain.field)
    row(op.plain.field, [&](const json& e) { return value_at(e, {"operator_report", op.plain.field}).dump(); });
  // Errors: the summed outputs' (rows the seed report's key), or with an
  // operator report every gradient's, and their largest error in ulps.
  std::vector<SeedField> shown;
  for (const SeedField& f : seed_grad_fields(op))
    if (op.prior_art_operator_report || op.outputs[f.output].kind != OutputKind::rowwise) shown.push_back(f);
  for (int64_t rows : value_at(r, {"grid", "accuracy_rows"}).get<std::vector<int64_t>>()) {
    const std::string n = std::to_string(rows);
    row(n + " fwd_rel_err", [&](const json& e) { return fmt(value_at(e, {"accuracy_latency", n, "fwd_rel_err"})); });
    for (const SeedField& f : shown) {
      const std::string name = op.outputs[f.output].name;
      row(n + " grad_rel_err." + f.key,
          [&](const json& e) { return fmt(value_at(e, {"accuracy_latency", n, "grad_rel_err", f.key})); });
      row(n + " " + name + " max ulps",
          [&](const json& e) { return fmt(value_at(e, {"gatecheck", "accuracy", n, "outputs", name, "max_ulps"})); });
    }
    row(n + " fwd_us", [&](const json& e) { return fmt(value_at(e, {"accuracy_latency", n, "fwd_us"})); });
    row(n + " fwd_bwd_us", [&](const json& e) { return fmt(value_at(e, {"accuracy_latency", n, "fwd_bwd_us"})); });
    if (op.prior_art_operator_report)
      row(n + " bwd_us", [&](const json& e) {
        const json t = value_at(e, {"gatecheck", "latency", n, "bwd"});
        return fmt(value_at(t, {"event_us"}).is_number() ? value_at(t, {"event_us"}) : value_at(t, {"wall_us"}));
      });
    row(n + " fwd_bwd gpu_us", [&](const json& e) { return fmt(value_at(e, {"gatecheck", "latency", n, "fwd_bwd", "gpu_us"})); });
    row(n + " fwd_bwd wall_us",
        [&](const json& e) { return fmt(value_at(e, {"gatecheck", "latency", n, "fwd_bwd", "wall_us"})); });
    row(n + " fwd_bwd copy us", [&](const json& e) {  // a copy of the same bytes, timed as fwd_bwd_us
      const json t = value_at(e, {"gatecheck", "latency", n, "fwd_bwd"});
      return fmt(value_at(t, {"copy_event_us"}).is_number() ? value_at(t, {"copy_event_us"}) : value_at(t, {"copy_wall_us"}));
    });
  }
  for (const auto& i : impls)
    if (const json err = value_at(plain[i], {"gatecheck", "error"}); err.is_string())
      os << "\n" << i << ": stopped by an error on valid input (every check it did not finish fails): "
         << err.get<std::string>() << "\n";
  // The plain part against its library op: why not computed, or where it differs.
  if (op.prior_art_operator_report && op.plain.field) {
    const std::string f = op.plain.field;
    for (const auto& i : impls) {
      const json v = value_at(plain[i], {"operator_report", f});
      const json note = value_at(plain[i], {"operator_report", f + "_note"});
      if (v.is_null() && note.is_string()) os << "\n" << i << ": " << f << " not computed: " << note.get<std::string>() << "\n";
      if (!v.is_boolean()) continue;
      os << "\n" << i << ": " << f << " " << v.dump() << ": " << (note.is_string() ? note.get<std::string>() : "")
         << "\n";
      const json by_size = value_at(plain[i], {"operator_report", f + "_by_size"});
      for (const json& at : by_size) {
        os << "  " << at.value("case", "") << ": " << value_at(at, {"differ"}).dump() << " of "
           << value_at(at, {"elements"}).dump() << " elements differ";
        const json d = value_at(at, {"first_differ"});
        if (d.is_object())
          os << ", first [" << d.value("row", -1) << ", " << d.value("col", -1) << "] bits " << d.value("bits", "")
             << " vs the library's " << d.value("library_bits", "") << " (" << d.value("why", "") << ")";
        os << "\n";
      }
    }
  }
  for (const auto& i : impls) {
    const json fs = value_at(plain[i], {"gatecheck", "failures"});
    if (!fs.is_array() || fs.empty()) continue;
    // The first failure of each check here; every kept one is in the report and the page.
    os << "\n" << i << ": failed comparisons, the first of each check (all saved ones: the report)\n";
    std::set<std::string> shown;
    for (const auto& f : fs) {
      const std::string check = f.value("check", "");
      if (!shown.insert(check).second) continue;
      const json n = value_at(plain[i], {"gatecheck", "failed_comparisons", check});
      os << "  " << check << " [" << f.value("verdict", "") << "], " << (n.is_number() ? n.get<int64_t>() : 0)
         << " failed: " << f.value("detail", "") << "\n";
      if (f["repro"].is_string()) os << "    repro: " << f["repro"].get<std::string>() << "\n";
      os << "    " << f.value("replay_note", "") << "\n";
    }
  }
}

}  // namespace

int cmd_sweep(const SweepArgs& args) {
  SweepArgs a = args;
  if (a.json == "-") a.json = "/dev/stdout";  // as check's --json -
  if (!a.validate.empty()) {
    const SweepArgs defaults;
    for (const auto& [given, name] : {std::pair<bool, const char*>{!a.impls.empty(), "--impl"},
                                      {!a.device.empty(), "--device"}, {a.quick, "--quick"},
                                      {!a.json.empty(), "--json"}, {!a.html.empty(), "--html"},
                                      {!a.compare.empty(), "--compare"}, {a.reps != defaults.reps, "--reps"}})
      if (given) return usage(std::string("--validate checks report files and runs nothing: ") + name + " does not apply");
    int rc = kExitOk;
    for (const auto& path : a.validate) rc = std::max(rc, validate(path));  // every file, the worst outcome
    return rc;
  }
  if (a.impls.empty())
    return usage("--impl: name at least one implementation to sweep (host, cuda, torch-eager, plugin:PATH, "
                 "python:TARGET)");
  if (a.json.empty()) return usage("--json FILE is required: the report is written there");
  for (const auto& [opt, path] : {std::pair<const char*, std::string>{"--json", a.json}, {"--html", a.html}})
    if (!path.empty() && !(writable_path(path) && (special_file(path) || writable_path(path + ".tmp"))))
      return usage(std::string(opt) + " " + path + ": cannot write there (" + std::strerror(errno) + ")");
  make_dirs(a.corpus);
  if (!writable_folder(a.corpus))
    return usage("--corpus " + a.corpus + ": cannot write there (" + std::strerror(errno) + ")");
  json theirs;
  if (!a.compare.empty()) {
    std::string why;
    if (!read_json(a.compare, &theirs, &why)) return usage("--compare " + a.compare + ": " + why);
    const bool operator_report = theirs.is_object() && theirs.value("kind", "") == kOperatorReportKind;
    if (operator_report && theirs.value("op", "") == "")
      return usage("--compare " + a.compare + ": an operator report that names no op");
    if (!operator_report &&
        (!theirs.is_object() || !theirs.contains("results") || !theirs["results"].contains("plain")))
      return usage("--compare " + a.compare + ": not a report of the seed's form (no results.plain) nor an " +
                   kOperatorReportKind);
    const auto problems = sweep_schema_problems(theirs);
    if (!problems.empty())
      std::fprintf(stderr, "gatecheck sweep: note: --compare %s differs from its form's schema in %zu place(s), "
                           "first %s; compared where the fields are there\n",
                   a.compare.c_str(), problems.size(), problems.front().c_str());
  }

  const OpSchema* op = find_op_schema(a.op);
  if (!op) return usage("--op: " + unknown_op(a.op));
  if (!find_op_oracle(*op))
    return usage("--op " + a.op + ": the oracle has no float64 reference for it, and the sweep's accuracy needs one");
  if (const std::string twice = repeated_impl_problem(a.impls); !twice.empty()) return usage(twice);
  std::vector<Subject> subjects;
  std::vector<SweepImplResult> unavailable;
  install_stop_handlers();  // before a Python implementation's import: a Ctrl-C during it stops the sweep
  for (const auto& spec : a.impls) {
    try {
      auto one = implementations_from_args({spec}, a.device, "", "", a.op, a.load_timeout);
      subjects.insert(subjects.end(), one.begin(), one.end());
    } catch (const ImplArgsError& e) {
      // A python: implementation where this gatecheck has no Python door is
      // not a typo: it cannot run here, as torch-eager without LibTorch.
      const bool no_door = spec.rfind("python:", 0) == 0 && e.message.rfind("unknown implementation", 0) == 0;
      if ((e.exit_code == kExitUsage && !no_door) || !a.skip_unavailable) {
        std::fprintf(stderr, "gatecheck sweep: %s\n", e.message.c_str());
        return e.exit_code;
      }
      SweepImplResult u;
      const std::string dev = !a.device.empty() ? a.device : spec == "cuda" ? "cuda" : "cpu";
      u.label = spec + "@" + dev;
      u.spec = spec;
      u.unavailable = no_door ? "this gatecheck has no Python door (python: implementations are not built in)" : e.message;
      unavailable.push_back(u);
      std::fprintf(stderr, "gatecheck sweep: %s: unavailable here (%s); listed as such\n", spec.c_str(),
                   u.unavailable.c_str());
    }
  }

  SweepGrid grid = a.quick ? quick_grid(*op) : full_grid(*op);
  if (a.reps >= 0) {  // the report's grid says so
    grid.reps = int(a.reps);
    grid.warmup = int(a.reps == 0 ? 0 : std::max(1LL, a.reps / 5));
  }
  const SweepCounts counts = expected_counts(grid);
  std::cerr << "gatecheck sweep: " << op->name << ", " << subjects.size() << " implementation(s), the "
            << (a.quick ? "--quick" : "full")
            << " grid: " << dtype_name(grid.dtype) << " dim " << grid.dim << ", " << grid.gates << " gates; "
            << counts.sub_batches << " sub-batches, " << counts.comparisons << " sweep comparisons each\n";
  if (a.quick) std::cerr << "  --quick: " << grid.quick_scaling << "\n";
  const json environment = sweep_environment();

  SweepOptions opt;
  opt.keep_failures = size_t(a.keep_failures);
  opt.progress = [](const std::string& what) {
    std::cerr << "  " << what << std::endl;
    set_crash_message("  while gatecheck sweep ran: " + what + "\n");
    watchdog_kick();
  };
  watchdog_arm(a.timeout);
  if (grid.reps > 0) opt.time_calls = time_sweep_calls;
  opt.stop_requested = stop_requested;
  opt.save_failure = [&](const Subject& s, SweepFailure* f) {
    SweepReplay rep = make_replay(s, grid, *f);
    f->replay_note = rep.note;
    if (!rep.file) return;
    const std::string path = failure_file_path(a.corpus, "sweep-", s.name, f->check, case_digest(rep.file->c));
    rep.file->failure->repro = repro_command(path, s.name, s.device);
    write_case_file(path, *rep.file);
    f->case_file = path;
    f->repro = rep.file->failure->repro;
    f->replayed = rep.fails;
  };
  if (!special_file(a.json))  // (a stream gets the final report only)
    opt.checkpoint = [&](const SweepRun& so_far) {  // a crash or kill loses at most the phase in hand
      write_text(a.json, sweep_report_json(so_far, environment, command_line(a))
                                 .dump(1, ' ', false, json::error_handler_t::replace) + "\n");
    };
  const SweepRun run = run_sweep(subjects, unavailable, grid, opt);
  set_crash_message("");

  json report = sweep_report_json(run, environment, command_line(a));
  int rc = kExitOk;
  const auto problems = sweep_schema_problems(report);
  if (!problems.empty() && run.complete) {
    std::cerr << "gatecheck sweep: the report does not follow the seed's schema or the grid's counts (a bug here):\n";
    for (const auto& p : problems) std::cerr << "  " << p << "\n";
    report["schema_problems"] = problems;
    rc = kExitFailure;
  }
  if (!a.compare.empty()) report["compare"] = compare_reports(report, theirs, a.compare);
  if (!write_text(a.json, report.dump(1, ' ', false, json::error_handler_t::replace) + "\n")) {
    std::fprintf(stderr, "gatecheck sweep: --json %s: could not write the report (%s)\n", a.json.c_str(),
                 std::strerror(errno));
    return kExitUsage;
  }
  if (!a.html.empty() && !write_text(a.html, sweep_html(report))) {
    std::fprintf(stderr, "gatecheck sweep: --html %s: could not write the page (%s)\n", a.html.c_str(),
                 std::strerror(errno));
    return kExitUsage;
  }
  // With the report on a stream (--json /dev/stdout), the summary goes to stderr.
  std::ostream& os = special_file(a.json) ? std::cerr : std::cout;
  print_summary(os, report, *op);
  if (subjects.empty()) {
    os << "\nwrote " << a.json << ": no implementation could run here (each is listed with the reason)\n";
    return kExitCannotRun;
  }
  if (report.contains("compare")) print_comparison(os, report["compare"]);
  bool claimed = false;
  for (const SweepImplResult& r : run.impls) claimed = claimed || r.any_claimed_failure();
  os << "\nwrote " << a.json << (a.html.empty() ? "" : " and " + a.html) << " in " << std::fixed
            << std::setprecision(1) << run.seconds << " s"
            << (run.interrupted ? std::string("; ") + stop_words() + ": the report is partial" : "") << "; "
            << (claimed ? "a claimed property failed" : "no claimed property failed") << "\n";
  if (run.interrupted) return stop_exit_code();
  return claimed ? kExitFailure : rc;
}

}  // namespace gatecheck
