// gatecheck repro and gatecheck shrink: replaying and minimising corpus files.
#include <algorithm>
#include <chrono>
#include <cerrno>
#include <optional>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "../case/case_json.h"
#include "../properties/catalog/property_catalog.h"
#include "../properties/generate/generators.h"
#include "../properties/checks/properties.h"
#include "../properties/scale/scale_tier.h"
#include "../properties/shrink/shrink.h"
#include "../properties/scale/shrink_scale.h"
#include "../harness/scale/scale_backend.h"
#include "cli.h"
#include "crash_guard.h"
#include "implementations_from_args.h"
#include "../findings/repro_command.h"
#include "report.h"
#include "stop_signal.h"

namespace gatecheck {

namespace {

// A scale case's values are made where its calls run, in this process; --isolate's child
// processes take a case's buffers, which such a case never has whole.
constexpr const char* kScaleNotIsolated =
    "a scale-tier case, whose calls run in this process: --isolate cannot run them in a child (replay it "
    "without --isolate; a crash is then reported with its case, as check's are)";

// The op of a file's case (a scale file's: its spec's).
const OpSchema& op_of(const CaseFile& f) { return f.scale ? *f.scale->spec.op : *f.c.op; }

// The implementations of the file's op to replay against: --impl if given,
// else the one the file records, else host.
std::vector<Subject> replay_impls(const std::vector<std::string>& specs, const std::string& device,
                                  const CaseFile& f, double load_timeout) {
  const std::string op = op_of(f).name;
  if (!specs.empty()) return implementations_from_args(specs, device, "", "", op, load_timeout);
  if (f.failure && !f.failure->impl.empty())
    return implementations_from_args({f.failure->impl}, device.empty() ? f.failure->device : device, "", "", op,
                                     load_timeout);
  return implementations_from_args({"host"}, device, "", "", op, load_timeout);
}

// "0.84 s"
std::string fmt_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s", s);
  return buf;
}

// Each line of `text`, indented under the verdict line.
std::string indented(const std::string& text) {
  std::string o;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    o += "    " + text.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return o;
}

}  // namespace

// What a crash (or exit, or hang) of impl on `what` prints: where it was, and
// the command that replays `file` for this implementation and property, with
// --isolate where the run had none (a replay without it would die as well).
static std::string replay_crash_message(const Subject& impl, const std::string& property,
                                        const std::string& what, const std::string& file, bool isolate) {
  return "  while " + impl.label() + " ran property " + property + " on " + what + "\n  repro: " +
         repro_command(file, impl.name, impl.device) + " --property " + property +
         (isolate ? "" : " --isolate (reports the crash instead of dying)") + "\n";
}

// How a replay of several files went, for its last line.
struct ReproTally {
  size_t failing = 0, passing = 0, unreadable = 0, not_reproduced = 0;
  size_t done() const { return failing + passing + unreadable + not_reproduced; }
};

static void print_repro_summary(const ReproTally& t, size_t files) {
  std::cout << "repro: " << files << " file" << (files == 1 ? "" : "s") << ": " << t.failing << " still failing, "
            << (t.not_reproduced ? std::to_string(t.not_reproduced) + " not reproduced, " : "") << t.passing
            << " passing, " << t.unreadable << " unusable (bad file or arguments)";
  if (stop_requested()) std::cout << "; " << stop_words() << " before the other " << files - t.done();
  std::cout << "\n";
}

// The worse of two exit codes: 3 could not run > 2 bad input > 1 still
// failing > 5 not reproduced > 0.
static int worse(int a, int b) {
  auto rank = [](int c) { return c == kExitNotReproduced ? 1 : c == kExitOk ? 0 : c + 1; };
  return rank(b) > rank(a) ? b : a;
}

int cmd_repro(const ReproArgs& a) {
  // Every file is replayed, whatever happened to the ones before; the exit
  // code is the worst outcome (worse()). Ctrl-C or SIGTERM stops after the
  // check in hand, whose verdict is dropped (the signal may have cut its call
  // short), and says what was replayed.
  if (const std::string twice = repeated_impl_problem(a.impls); !twice.empty()) {
    std::fprintf(stderr, "gatecheck repro: %s\n", twice.c_str());
    return kExitUsage;
  }
  if (!a.property.empty()) {  // (each file's op is checked when the file is read)
    std::string problem;
    property_list("--property", a.property, nullptr, &problem);
    if (!problem.empty()) {
      std::fprintf(stderr, "gatecheck repro: %s\n", problem.c_str());
      return kExitUsage;
    }
  }
  int rc = kExitOk;
  ReproTally tally;
  const PropertyOptions popt{a.isolate, a.timeout};
  if (!a.isolate) watchdog_arm(a.timeout);  // a hang ends the run with the case named
  install_stop_handlers();
  for (const auto& file : a.files) {
    if (stop_requested()) break;
    CaseFile f;
    try {
      f = read_case_file(file);
    } catch (const CaseFileError& e) {
      std::fprintf(stderr, "gatecheck repro: %s\n", e.what());
      rc = worse(rc, kExitUsage);
      ++tally.unreadable;
      continue;
    }
    if (f.scale && a.isolate) {
      std::fprintf(stderr, "gatecheck repro: %s: %s\n", file.c_str(), kScaleNotIsolated);
      rc = worse(rc, kExitUsage);
      ++tally.unreadable;
      continue;
    }
    std::vector<Subject> impls;
    try {
      impls = replay_impls(a.impls, a.device, f, a.load_timeout);
    } catch (const ImplArgsError& e) {
      std::fprintf(stderr, "gatecheck repro: %s: %s\n", file.c_str(), e.message.c_str());
      rc = worse(rc, e.exit_code);
      ++tally.unreadable;
      continue;
    }
    // A scale-tier file (case/scale_case.h) replays through the scale
    // versions of the properties, its values generated where it runs.
    std::optional<ScaleCase> sc;
    if (f.scale) {
      try {
        sc = f.scale->make();
      } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "gatecheck repro: %s: %s\n", file.c_str(), e.what());
        rc = worse(rc, kExitUsage);
        ++tally.unreadable;
        continue;
      }
    }
    std::vector<std::string> props;
    if (!a.property.empty()) props = split_list(a.property);
    else if (f.failure && !f.failure->property.empty()) props = {f.failure->property};
    else props = default_properties_for(op_of(f));
    if (sc && a.property.empty())  // the default set's properties that have a scale version
      props.erase(std::remove_if(props.begin(), props.end(), [](const std::string& p) { return !has_scale_version(p); }),
                  props.end());
    if (const auto unknown = std::find_if(props.begin(), props.end(), [](const std::string& p) { return !is_property(p); });
        unknown != props.end()) {  // only a file's record can name one: --property was checked above
      std::fprintf(stderr, "gatecheck repro: %s records %s\n", file.c_str(), unknown_property(*unknown).c_str());
      rc = worse(rc, kExitUsage);
      ++tally.unreadable;
      continue;
    }
    std::cout << file << ": " << (sc ? describe(*sc) : describe(f.c)) << "\n";
    bool failing = false, bad = false, stopped = false, unreproduced = false;
    for (const auto& impl : impls) {
      for (const auto& prop : props) {
        if ((stopped = stop_requested())) break;
        if (!sc && !plan_moves_rows(prop, f.c)) {  // the property would only call itself vacuous
          std::cout << "  " << impl.label() << " " << prop << ": not tested (this case's batch plan moves no row, "
                    << "so it cannot test " << prop << ")\n";
          continue;
        }
        // A recorded failure that can depend on scheduling gets attempts until
        // it shows, within --attempts and --seconds; anything else gets one.
        const PropertyInfo* info = find_property(prop);  // (an unknown name is refused below, by the check)
        // (Only for the implementation that failed: another one passing it is no news.)
        const bool retry = info && info->flaky_failures && f.failure && f.failure->property == prop &&
                           f.failure->impl == impl.name;
        const int64_t attempts = retry ? a.attempts : 1;
        const auto t0 = std::chrono::steady_clock::now();
        auto seconds_gone = [&] {
          return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        };
        Verdict v;
        int64_t attempt = 0;
        try {
          CrashMessageScope guard(replay_crash_message(impl, prop, file, file, a.isolate));
          for (;;) {
            ++attempt;
            ScaleCheckOptions so;
            so.stress_seed = uint64_t(attempt - 1);  // each attempt its own schedule of perturbations
            v = sc ? check_scale_property(prop, impl, *sc, so) : check_property(prop, impl, f.c, popt);
            if (!v.passed || attempt >= attempts || seconds_gone() >= a.seconds || stop_requested()) break;
          }
        } catch (const ScaleNoMemory& e) {
          std::cout << "  " << impl.label() << " " << prop << ": not tested (the case does not fit: " << e.what() << ")\n";
          rc = worse(rc, kExitCannotRun);
          bad = true;
          continue;
        } catch (const std::invalid_argument& e) {
          std::fprintf(stderr, "gatecheck repro: %s: %s\n", file.c_str(), e.what());
          rc = worse(rc, kExitUsage);
          bad = true;
          continue;
        }
        if ((stopped = stop_requested())) {
          std::cout << "  " << impl.label() << " " << prop << ": " << stop_words() << " during this check: not counted\n";
          break;
        }
        const bool claimed = breaks_claim(v, impl.contract, sc ? sc->dtype : f.c.dtype);
        if (v.passed && retry) {  // not a pass: the file saw it fail, and this failure can come and go
          std::cout << "  " << impl.label() << " " << prop << ": not reproduced in " << attempt << " attempt"
                    << (attempt == 1 ? "" : "s") << " (" << fmt_seconds(seconds_gone())
                    << "; this failure may depend on scheduling; the file keeps the bits seen when it was found:)\n"
                    << indented(f.failure->evidence.empty() ? f.failure->message : f.failure->evidence) << "\n";
          rc = worse(rc, kExitNotReproduced);
          unreproduced = true;
          continue;
        }
        std::cout << "  " << impl.label() << " " << prop << ": "
                  << (v.passed ? "pass" : claimed ? "FAIL (still failing)" : "finding (unclaimed, still failing)")
                  << (retry && !v.passed ? "; reproduced on attempt " + std::to_string(attempt) : "") << "\n";
        if (!v.passed) {
          std::cout << evidence_text(v) << "\n";
          rc = worse(rc, kExitFailure);
          failing = true;
        }
      }
      if (stopped) break;
    }
    if (stopped) break;  // this file is not counted
    ++(failing ? tally.failing : bad ? tally.unreadable : unreproduced ? tally.not_reproduced : tally.passing);
    std::cout.flush();  // each file's verdict shows as it is reached, through a pipe or tee too
  }
  if (a.files.size() > 1 || stop_requested()) print_repro_summary(tally, a.files.size());
  return stop_requested() ? stop_exit_code() : rc;
}

// Writes a shrink's result and says where, with its repro command; the exit
// code of a finished shrink, or of one a signal stopped.
static int write_shrunk(const std::string& out, const CaseFile& m, bool interrupted) {
  try {
    write_case_file(out, m);
  } catch (const CaseFileError& e) {
    std::fprintf(stderr, "gatecheck shrink: %s\n", e.what());
    return kExitUsage;
  }
  std::cout << "written to " << out << "\nrepro: " << m.failure->repro << "\n";
  return interrupted ? stop_exit_code() : kExitOk;
}

// The scale shrinker on a scale file: writes the smallest failing case to
// `out` as spec + view, or, when it became small, hands its explicit values
// back in *small (exit 0) for the ordinary shrinker to take further.
static int shrink_scale_file(const ShrinkArgs& a, const CaseFile& f, const Subject& impl, const std::string& property,
                             const std::string& out, std::optional<Case>* small) {
  ScaleCase c;
  Verdict v;
  try {
    c = f.scale->make();
    std::cout << "shrinking " << describe(c) << " for " << impl.label() << " " << property << " at scale\n";
    v = check_scale_property(property, impl, c, ScaleCheckOptions{});
  } catch (const ScaleNoMemory& e) {
    std::fprintf(stderr, "gatecheck shrink: %s: the case does not fit: %s\n", a.file.c_str(), e.what());
    return kExitCannotRun;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "gatecheck shrink: %s\n", e.what());
    return kExitUsage;
  }
  if (v.passed) {
    std::fprintf(stderr, "gatecheck shrink: property '%s' passes on %s for this case (%s); nothing to shrink\n",
                 property.c_str(), impl.label().c_str(), describe(c).c_str());
    return kExitUsage;
  }
  const ScaleShrinkResult r = shrink_scale_case(impl, property, c, v, ScaleCheckOptions{},
                                                [](const std::string& step) { std::cout << "  " << step << "\n"; },
                                                a.seconds, stop_requested);
  std::cout << (r.interrupted ? "smallest case" : "minimal case") << " at scale after " << r.steps << " steps ("
            << r.attempts << " candidates): " << describe(r.minimal) << "\n" << evidence_text(r.verdict) << "\n";
  if (r.small && !r.interrupted) {
    *small = r.small;
    return kExitOk;
  }
  CaseFile m;
  m.scale = ScaleFileCase{r.minimal.spec, r.minimal.view};
  m.failure = FailureRecord{impl.name, device_name(impl.device), property, r.verdict.message,
                            repro_command(out, impl.name, impl.device), breaks_claim(r.verdict, impl.contract, r.minimal.dtype),
                            evidence_text(r.verdict)};
  m.note = "shrunk at scale by gatecheck shrink in " + std::to_string(r.steps) + " steps from " + describe(c);
  return write_shrunk(out, m, r.interrupted);
}

int cmd_shrink(const ShrinkArgs& a) {
  CaseFile f;
  try {
    f = read_case_file(a.file);
  } catch (const CaseFileError& e) {
    std::fprintf(stderr, "gatecheck shrink: %s\n", e.what());
    return kExitUsage;
  }
  if (!a.op.empty() && a.op != op_of(f).name) {
    std::fprintf(stderr, "gatecheck shrink: --op %s, but %s is a case of %s\n", a.op.c_str(), a.file.c_str(),
                 op_of(f).name);
    return kExitUsage;
  }
  if (f.scale && a.isolate) {
    std::fprintf(stderr, "gatecheck shrink: %s: %s\n", a.file.c_str(), kScaleNotIsolated);
    return kExitUsage;
  }
  const std::string property = !a.property.empty() ? a.property : f.failure ? f.failure->property : "";
  if (property.empty()) {
    std::fprintf(stderr, "gatecheck shrink: %s records no failing property; pass --property P\n", a.file.c_str());
    return kExitUsage;
  }
  if (!is_property(property)) {  // before the implementation loads
    const std::string why = !a.property.empty() ? "--property: " : a.file + " records ";
    std::fprintf(stderr, "gatecheck shrink: %s%s\n", why.c_str(), unknown_property(property).c_str());
    return kExitUsage;
  }
  std::string out = a.out;
  if (out.empty()) {
    out = a.file;
    const auto dot = out.rfind('.');
    if (dot != std::string::npos && out.find('/', dot) == std::string::npos) out = out.substr(0, dot);
    out += ".min.json";
  }
  if (!writable_path(out)) {  // before the load and the work, not after
    std::fprintf(stderr, "gatecheck shrink: --out %s: cannot write there (%s)\n", out.c_str(), std::strerror(errno));
    return kExitUsage;
  }
  install_stop_handlers();  // before a Python implementation's import: a Ctrl-C during it stops the shrink
  std::vector<Subject> impls;
  try {
    impls = replay_impls(a.impl.empty() ? std::vector<std::string>{} : std::vector<std::string>{a.impl}, a.device, f,
                         a.load_timeout);
  } catch (const ImplArgsError& e) {
    std::fprintf(stderr, "gatecheck shrink: %s\n", e.message.c_str());
    return e.exit_code;
  }
  const Subject& impl = impls.front();
  if (!a.isolate) watchdog_arm(a.seconds + a.timeout);  // the cap is checked between candidates
  if (f.scale) {  // a scale case: the scale shrinker first (shrink_scale.h), then the ordinary one once small
    std::optional<Case> small;
    const int rc = shrink_scale_file(a, f, impl, property, out, &small);
    if (rc != kExitOk || !small) return rc;
    f = CaseFile{*small, std::nullopt, {}, ""};
    std::cout << "small enough for explicit values: the ordinary shrinker goes on\n";
  }
  std::cout << "shrinking " << describe(f.c) << " for " << impl.label() << " " << property << "\n";
  ShrinkResult r;
  try {
    CrashMessageScope guard(
        replay_crash_message(impl, property, "a candidate shrunk from " + a.file, a.file, a.isolate));
    // Ctrl-C keeps the smallest case so far (the stop handlers went in before the implementation loaded)
    r = shrink_case(impl, property, f.c, [](const std::string& step) { std::cout << "  " << step << "\n"; },
                    a.seconds, PropertyOptions{a.isolate, a.timeout}, stop_requested);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "gatecheck shrink: %s\n", e.what());
    return kExitUsage;
  }
  CaseFile m{r.minimal, std::nullopt, {}, ""};
  m.failure = FailureRecord{impl.name, device_name(impl.device), property, r.verdict.message,
                            repro_command(out, impl.name, impl.device),
                            breaks_claim(r.verdict, impl.contract, r.minimal.dtype), evidence_text(r.verdict)};
  m.note = "shrunk by gatecheck shrink in " + std::to_string(r.steps) + " steps (" + std::to_string(r.attempts) +
           " candidates)" + (r.cut_short ? " (cut short: a smaller case may fail)" : "") + " from " + describe(f.c);
  if (r.interrupted)
    std::cout << stop_words() << ": the smallest failing case so far\n";
  std::cout << (r.interrupted ? "smallest case" : "minimal case") << " after " << r.steps << " steps (" << r.attempts
            << " candidates): " << describe(r.minimal) << "\n" << evidence_text(r.verdict) << "\n";
  return write_shrunk(out, m, r.interrupted);
}

}  // namespace gatecheck
