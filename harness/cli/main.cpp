// gatecheck: differential fuzzing and property testing of gate_residual.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>

#include "cli.h"

int main(int argc, char** argv) {
  using namespace gatecheck;
  CLI::App app{"gatecheck: differential fuzzing and property testing of gate_residual (out = res + gate[index] * y)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", GATECHECK_VERSION);

  CheckArgs check;
  auto* c = app.add_subcommand("check", "run the property suite on implementations against the float64 oracle");
  c->add_option("--impl", check.impls, "implementation: host, cuda, torch-eager, plugin:PATH (repeatable; default: all available)");
  c->add_option("--device", check.device, "cpu or cuda (default: every device available)")->check(CLI::IsMember({"cpu", "cuda"}));
  c->add_option("--seconds", check.seconds, "time budget for the whole run")->check(CLI::NonNegativeNumber);
  c->add_option("--cases", check.cases, "case budget per implementation x property (0: time budget only)")->check(CLI::NonNegativeNumber);
  c->add_option("--seed", check.seed, "random seed (printed on every run; default: from the clock)")->each([&](const std::string&) { check.seed_given = true; });
  c->add_option("--properties", check.properties, "comma-separated properties (default set if omitted; eager_exact is opt-in)");
  c->add_option("--claims", check.claims, "comma-separated claims overriding every contract for this run (property or property:output)");
  c->add_option("--corpus", check.corpus, "where counterexamples are saved")->capture_default_str();
  c->add_option("--json", check.json, "write the results as JSON to this file");
  c->add_flag("--isolate", check.isolate, "run each call in a child process, so a crash becomes a reported failure");

  ReproArgs repro;
  auto* r = app.add_subcommand("repro", "replay corpus files; exit 1 if a failure is still there");
  r->add_option("files", repro.files, "corpus JSON files")->required()->check(CLI::ExistingFile);
  r->add_option("--impl", repro.impls, "implementation(s) to replay against (default: the one recorded in the file)");
  r->add_option("--device", repro.device, "cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}));
  r->add_option("--property", repro.property, "property to check (default: the one recorded, else the default set)");

  ShrinkArgs shrink;
  auto* s = app.add_subcommand("shrink", "shrink a failing corpus file to a minimal case (deterministic)");
  s->add_option("file", shrink.file, "corpus JSON file")->required()->check(CLI::ExistingFile);
  s->add_option("--impl", shrink.impl, "implementation (default: the one recorded in the file)");
  s->add_option("--device", shrink.device, "cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}));
  s->add_option("--property", shrink.property, "property that fails (default: the one recorded in the file)");
  s->add_option("--out", shrink.out, "where to write the minimal case (default: FILE with .min.json)");
  s->add_option("--seconds", shrink.seconds, "time cap")->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  try {
    if (*c) return cmd_check(check);
    if (*r) return cmd_repro(repro);
    if (*s) return cmd_shrink(shrink);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gatecheck: %s\n", e.what());
    return kExitUsage;
  }
  return kExitUsage;
}
