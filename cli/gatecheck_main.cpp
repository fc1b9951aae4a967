// The gatecheck command line's parser and dispatch (gatecheck_main, cli.h):
// the program is main.cpp, and a program that adds ops of its own (a test's)
// links this library and calls it the same way.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <iostream>
#include <exception>

#include "../bench/kernel_bench.h"
#include "../properties/engine/check_engine.h"
#include "../properties/engine/check_workers.h"
#include "../properties/generate/generators.h"
#include "../properties/engine/harness_bench.h"
#include "../properties/scale/scale_tier.h"
#include "../harness/isolate/isolate.h"
#include "../harness/impls/plugin_stdout.h"
#if GATECHECK_HAVE_PYTHON
#include "../harness/impls/python_impl.h"
#endif
#include "cli.h"
#include "crash_guard.h"
#include "supervisor.h"
#include "implementations_from_args.h"
#include "validators.h"

// The fresh-process children of --isolate run from main(), after every static
// initialiser (the CUDA runtime registers our kernels in one).
extern "C" {
bool gatecheck_isolate_worker_in_main = true;
}

namespace {
// --isolate and --timeout, as check, repro and shrink take them.
void add_isolate_options(CLI::App* app, bool* isolate, double* timeout, const char* without_isolate) {
  app->add_flag("--isolate", *isolate, "run each call in a child process, so a crash, exit or hang is reported");
  app->add_option("--timeout", *timeout,
                  std::string("seconds one call (without --isolate: ") + without_isolate +
                      ") may take before it counts as hung")
      ->capture_default_str()
      ->check(gatecheck::finite_seconds(true));
}
}  // namespace

void gatecheck::add_load_timeout_option(CLI::App* app, double* seconds, const std::string& for_what) {
  app->add_option("--load-timeout", *seconds,
                  for_what + "seconds the implementations may take to load (a Python module's import and gatecheck_setup, a "
                  "plugin's load) before the run counts as hung (0: no limit)")
      ->capture_default_str()
      ->check(finite_seconds(true));
}

int gatecheck::gatecheck_main(int argc, char** argv) {
  using namespace gatecheck;
#if GATECHECK_HAVE_PYTHON
  enable_python_implementations();  // before a fresh-process child rebuilds its implementation
#endif
  run_isolate_worker_if_requested();
  run_supervised();  // (the rest runs in a child that this process waits for)
  install_crash_guard();
  report_only_through_cout();  // so a plugin's own threads cannot print into the report
  CLI::App app{"gatecheck: differential fuzzing and property testing of GPU operators (gatecheck ops lists them)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", GATECHECK_VERSION);

  // --op on every command that draws or runs cases of an op; repro and
  // shrink read it from the file.
  auto add_op = [](CLI::App* sub, std::string* op) {
    sub->add_option("--op", *op, std::string("the op (gatecheck ops lists them; default ") + kDefaultOp + ")")
        ->capture_default_str();
  };

  auto* o = app.add_subcommand("ops", "list the ops: their tensors in order, outputs, scalars, implementations "
                                      "and the properties that apply");
  std::string ops_name;
  o->add_option("name", ops_name, "one op (default: every one)");

  CheckArgs check;
  auto* c = app.add_subcommand("check", "run the property suite on implementations against the float64 oracle");
  add_op(c, &check.op);
  c->add_option("--impl", check.impls,
                "implementation: host, cuda, torch-eager, host-repro, cuda-repro, plugin:PATH, python:MODULE:ATTR or python:FILE.py:ATTR "
                "(repeatable; default: all available)");
  c->add_option("--device", check.device, "cpu or cuda (default: every device available)")->check(CLI::IsMember({"cpu", "cuda"}));
  c->add_option("--seconds", check.seconds,
                "time budget for the whole run's cases; shrinking a failure comes on top (--shrink-seconds) "
                "(0: none, so --cases, or " + std::to_string(kCasesWithoutBudget) + " cases a property)")
      ->capture_default_str()->check(finite_seconds());
  c->add_option("--shrink-seconds", check.shrink_seconds,
                "time budget for shrinking each failure, on top of --seconds (0: report the case as found); a shrink "
                "it cuts short says so, and gatecheck shrink FILE goes on from the saved case")
      ->capture_default_str()->check(finite_seconds());
  c->add_option("--cases", check.cases, "case budget per implementation x property (0: time budget only)")
      ->check(whole_number(1000000000000ull, "cases"));
  c->add_option("--seed", check.seed, "random seed (printed on every run; default: from the clock)")
      ->check(whole_number(18446744073709551615ull, "a 64-bit seed"))
      ->each([&](const std::string&) { check.seed_given = true; });
  c->add_option("--properties", check.properties, "comma-separated properties (default set if omitted; eager_exact is opt-in)")
      ->check(name_list("property"));
  c->add_option("--claims", check.claims,
                "the contract for this run, overriding every implementation's: comma-separated claims (property or "
                "property:output), then optionally '; not CLAIM for DTYPES' and '; valid BOUNDS' (docs/python.md)")
      ->check(name_list("claim"));
  c->add_option("--valid", check.valid,
                "narrow every contract's valid inputs, e.g. \"rows>=1,dim>=1\" for an op that rejects empty problems "
                "(rows, dim, gates with >= or <=)");
  c->add_option("--corpus", check.corpus, "where counterexamples are saved")->capture_default_str();
  c->add_option("--json", check.json,
                "write the results as JSON to this file; '-' (or /dev/stdout): the JSON alone on stdout, "
                "the report on stderr");
  add_isolate_options(c, &check.isolate, &check.timeout, "one property check");
  add_load_timeout_option(c, &check.load_timeout);
  c->add_option("--jobs", check.jobs,
                "worker threads that run cases at once (default: the machine's cores, " +
                    std::to_string(default_check_jobs()) + " here); the same --seed gives the same cases for any --jobs")
      ->check(whole_number(1, kMaxJobs, "worker threads"));
  const GenLimits gen_defaults;
  c->add_option("--max-rows", check.max_rows,
                "largest row count generated (default " + std::to_string(gen_defaults.max_rows) + ")")
      ->check(whole_number(1, kMaxGenRows, "rows"));
  c->add_option("--max-dim", check.max_dim,
                "largest dim generated (default " + std::to_string(gen_defaults.max_dim) +
                    ", and wide dims up to " + std::to_string(gen_defaults.big_dim_max) +
                    " (the models' 3072, 5376, 8192, and odd and prime ones past 4,096) for cases of at most " +
                    std::to_string(gen_defaults.big_dim_max_rows) + " rows, none above a lower --max-dim)")
      ->check(whole_number(1, kMaxGenDim, "dim"));
  c->add_option("--max-gates", check.max_gates,
                "largest gate count generated (default " + std::to_string(gen_defaults.max_gates) + ")")
      ->check(whole_number(1, kMaxGenGates, "gates"));
  c->add_option("--min-rows", check.min_rows,
                "smallest row count generated (default 0), to put every case among large ones")
      ->check(whole_number(0, kMaxGenRows, "rows"));
  c->add_option("--min-dim", check.min_dim, "smallest dim generated (default 0)")->check(whole_number(0, kMaxGenDim, "dim"));
  c->add_option("--min-gates", check.min_gates, "smallest gate count generated (default 0; a case with rows has 1 at least)")
      ->check(whole_number(0, kMaxGenGates, "gates"));

  c->add_option("--scale-share", check.scale_share,
                "share of each implementation x property budget for cases drawn at scale (0: none; default " +
                    std::to_string(kDefaultScaleShareCuda).substr(0, 4) + " on cuda, " +
                    std::to_string(kDefaultScaleShareCpu).substr(0, 4) + " on the cpu; docs/scale.md)")
      ->check(fraction("--scale-share"));
  c->add_option("--scale-memory-gib", check.scale_memory_gib,
                "memory one scale case may take where it runs (default: 60% of the device's free memory; "
                "a quarter of the host's, at most 2, on the cpu)")
      ->check(whole_number(1, 1u << 20, "GiB"));
  c->add_flag("--stop-on-failure", check.stop_on_failure,
              "end the run at its first claimed failure, once shrunk (the cases up to it are a full run's)");

  ReproArgs repro;
  auto* r = app.add_subcommand("repro", "replay corpus files; exit 1 if a failure is still there");
  r->add_option("FILE", repro.files, "corpus JSON files to replay (one or more)")->required()->check(CLI::ExistingFile);
  r->add_option("--impl", repro.impls, "implementation(s) to replay against (default: the one recorded in the file)");
  r->add_option("--device", repro.device, "cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}));
  r->add_option("--property", repro.property, "property to check (default: the one recorded, else the default set)")
      ->check(name_list("property"));
  add_isolate_options(r, &repro.isolate, &repro.timeout, "one property check");
  add_load_timeout_option(r, &repro.load_timeout);
  r->add_option("--attempts", repro.attempts,
                "replays of a recorded failure that can depend on scheduling (repeatable, the invariance "
                "properties) before it is called not reproduced (exit 5)")
      ->capture_default_str()
      ->check(whole_number(1, 1000000, "attempts"));
  r->add_option("--seconds", repro.seconds, "time cap on those replays, per file and property")
      ->capture_default_str()
      ->check(finite_seconds(true));

  ShrinkArgs shrink;
  auto* s = app.add_subcommand("shrink", "shrink a failing corpus file to a minimal case (deterministic)");
  s->add_option("--op", shrink.op, "the op the file must be a case of (default: the one it names)");
  s->add_option("FILE", shrink.file, "the failing corpus JSON file")->required()->check(CLI::ExistingFile);
  s->add_option("--impl", shrink.impl, "implementation (default: the one recorded in the file)");
  s->add_option("--device", shrink.device, "cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}));
  s->add_option("--property", shrink.property, "property that fails (default: the one recorded in the file)")
      ->check(name_list("property"));
  s->add_option("--out", shrink.out, "where to write the minimal case (default: FILE with .min.json)");
  s->add_option("--seconds", shrink.seconds, "time cap (> 0: a shrink with no time does nothing)")
      ->capture_default_str()
      ->check(finite_seconds(true));
  add_isolate_options(s, &shrink.isolate, &shrink.timeout, "the shrink beyond --seconds");
  add_load_timeout_option(s, &shrink.load_timeout);

  SweepArgs sweep;
  auto* w = app.add_subcommand("sweep", "the prior art's report (PRIOR_ART.md) field for field, and what it could not "
                                        "check, for each implementation (docs/sweep.md)");
  add_sweep_options(w, &sweep);
  add_op(w, &sweep.op);

  bool harness_bench_flag = false;
  gatecheck::HarnessBenchOptions hb;
  std::vector<std::string> bench_impls;
  auto* b = app.add_subcommand("bench", "benchmarks: the CUDA kernels vs torch eager vs the copy ceiling (GPU), "
                                        "or with --harness the property harness's cases/s per property");
  b->add_flag("--harness", harness_bench_flag, "cases per second per property on this machine (the CPU, or --device cuda)");
  std::string bench_op = kDefaultOp;
  b->add_option("--op", bench_op, std::string("the op (default ") + kDefaultOp + "): --harness's, or the kernel benchmark's");
  b->add_option("--impl", bench_impls, "--harness: implementations (default host)");
  std::string bench_device;
  b->add_option("--device", bench_device, "--harness: cpu or cuda (default: cpu, or cuda for --impl cuda)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  auto* bench_seconds = b->add_option("--seconds-per-property", hb.seconds_per_property,
                                      "--harness: time per property and jobs count")
                            ->capture_default_str()
                            ->check(finite_seconds());
  b->add_option("--cases-per-property", hb.cases_per_property,
                "--harness: instead of a time, this many cases per property and jobs count, the same cases for every "
                "implementation (to compare two)")
      ->check(whole_number(1, 100000000, "cases"))
      ->excludes(bench_seconds);
  long long bench_jobs = 0;
  b->add_option("--jobs", bench_jobs,
                "--harness: worker threads of the parallel figures, each beside --jobs 1 (default: the machine's cores; 1: one figure each)")
      ->check(whole_number(1, kMaxJobs, "worker threads"));
  std::string bench_properties;
  b->add_option("--properties", bench_properties, "--harness: comma-separated properties (default: the default set)")
      ->check(name_list("property"));
  b->add_flag("--isolate", hb.isolate, "--harness: as check --isolate (every call in a child process)");
  b->add_option("--timeout", hb.isolate_timeout_seconds, "--harness: with --isolate, seconds one call may take")
      ->capture_default_str()
      ->check(finite_seconds());
  double bench_load_timeout = 60;
  add_load_timeout_option(b, &bench_load_timeout, "--harness: ");
  std::string bench_json;
  b->add_option("--json", bench_json, "--harness: also write the figures as JSON to this file ('-': only the JSON, on stdout)");
  bool help_kernel = false;
  b->add_flag("--help-kernel", help_kernel, "list the kernel benchmark's own options");
  b->allow_extras();  // the kernel benchmark's own options

  auto* n = app.add_subcommand("nightly", "the nightly fuzz campaign (fuzz/nightly.sh): --hours H "
                                          "[--gpus N] [--jobs M] [--impl SPEC]... --out DIR [--shard I/N], "
                                          "or --merge DIR... (docs/nightly.md)");
  n->allow_extras();
  n->prefix_command();
  n->set_help_flag();  // --help goes to the script

  if (argc > 1 && argv[1][0] != '-') {  // CLI11 would only say "A subcommand is required"
    bool known = false;
    for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) known = known || sub->get_name() == argv[1];
    if (!known) {
      std::fprintf(stderr, "gatecheck: unknown subcommand '%s' (ops, check, repro, shrink, sweep, bench, nightly; see --help)\n", argv[1]);
      return kExitUsage;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  try {
    if (*o) return cmd_ops(ops_name);
    if (*c) return cmd_check(check);
    if (*r) return cmd_repro(repro);
    if (*s) return cmd_shrink(shrink);
    if (*w) return cmd_sweep(sweep);
    if (*b) {
      if (harness_bench_flag) {
        // allow_extras() keeps the kernel benchmark's options for it; --harness takes none of them.
        if (!b->remaining().empty()) {
          std::string extra;
          for (const auto& x : b->remaining()) extra += (extra.empty() ? "" : " ") + x;
          std::fprintf(stderr, "gatecheck bench --harness: unknown option or argument: %s (bench --help lists "
                               "--harness's options; the kernel benchmark's do not apply)\n", extra.c_str());
          return kExitUsage;
        }
        if (!bench_properties.empty()) {  // before the implementations load
          std::string problem;
          hb.properties = property_list("--properties", bench_properties, find_op_schema(bench_op), &problem);
          if (!problem.empty()) {
            std::fprintf(stderr, "gatecheck bench: %s\n", problem.c_str());
            return kExitUsage;
          }
        }
        if (!bench_json.empty() && bench_json != "-" && !writable_path(bench_json)) {
          std::fprintf(stderr, "gatecheck bench: --json %s: cannot write there (%s)\n", bench_json.c_str(),
                       std::strerror(errno));
          return kExitUsage;
        }
        std::vector<Subject> impls;
        try {
          impls = implementations_from_args(bench_impls.empty() ? std::vector<std::string>{"host"} : bench_impls,
                                            bench_device, "", "", bench_op, bench_load_timeout);
        } catch (const ImplArgsError& e) {
          std::fprintf(stderr, "gatecheck bench: %s\n", e.message.c_str());
          return e.exit_code;
        }
        hb.jobs = int(bench_jobs);
        return harness_bench_with_snapshots(impls, hb, bench_json);
      }
      for (const char* opt : {"--impl", "--device", "--seconds-per-property", "--cases-per-property", "--jobs",
                              "--properties", "--isolate", "--timeout", "--load-timeout", "--json"})
        if (b->count(opt) > 0) {
          std::fprintf(stderr, "gatecheck bench: %s is an option of bench --harness (give --harness, or leave it out)\n",
                       opt);
          return kExitUsage;
        }
      std::vector<std::string> rest = b->remaining();
      if (help_kernel) rest = {"--help"};
      std::vector<char*> args{argv[0]};
      std::string op_arg = "--op";
      if (b->count("--op") > 0) {  // the kernel benchmark of that op
        args.push_back(op_arg.data());
        args.push_back(bench_op.data());
      }
      for (auto& x : rest) args.push_back(x.data());
      return run_kernel_bench(int(args.size()), args.data());
    }
    if (*n) {
      const std::string script = std::string(GATECHECK_SOURCE_DIR) + "/fuzz/nightly.sh";
      std::vector<std::string> rest = n->remaining();
      std::vector<char*> args{const_cast<char*>(script.c_str())};
      for (auto& x : rest) args.push_back(x.data());
      args.push_back(nullptr);
      execv(script.c_str(), args.data());
      std::fprintf(stderr, "gatecheck nightly: cannot run %s\n", script.c_str());
      return kExitCannotRun;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gatecheck: %s\n", e.what());
    return kExitUsage;
  }
  return kExitUsage;
}
