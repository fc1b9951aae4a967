// gatecheck repro and gatecheck shrink: replaying and minimising corpus files.
#include <cstdio>
#include <iostream>

#include "../../properties/case_json.h"
#include "../../properties/properties.h"
#include "../../properties/shrink.h"
#include "cli.h"
#include "implementations_from_args.h"
#include "report.h"

namespace gatecheck {

namespace {

// The implementations to replay against: --impl if given, else the one the file records, else host.
std::vector<Implementation> replay_impls(const std::vector<std::string>& specs, const std::string& device,
                                         const CaseFile& f) {
  if (!specs.empty()) return implementations_from_args(specs, device, "");
  if (f.failure && !f.failure->impl.empty())
    return implementations_from_args({f.failure->impl}, device.empty() ? f.failure->device : device, "");
  return implementations_from_args({"host"}, device, "");
}

}  // namespace

int cmd_repro(const ReproArgs& a) {
  int rc = kExitOk;
  for (const auto& file : a.files) {
    CaseFile f;
    try {
      f = read_case_file(file);
    } catch (const CaseFileError& e) {
      std::fprintf(stderr, "gatecheck repro: %s\n", e.what());
      rc = std::max(rc, int(kExitUsage));
      continue;
    }
    std::vector<Implementation> impls;
    try {
      impls = replay_impls(a.impls, a.device, f);
    } catch (const ImplArgsError& e) {
      std::fprintf(stderr, "gatecheck repro: %s\n", e.message.c_str());
      return e.exit_code;
    }
    std::vector<std::string> props;
    if (!a.property.empty()) props = split_list(a.property);
    else if (f.failure && !f.failure->property.empty()) props = {f.failure->property};
    else props = default_properties();
    std::cout << file << ": " << describe(f.c) << "\n";
    for (const auto& impl : impls)
      for (const auto& prop : props) {
        Verdict v;
        try {
          v = check_property(prop, impl, f.c);
        } catch (const std::invalid_argument& e) {
          std::fprintf(stderr, "gatecheck repro: %s\n", e.what());
          return kExitUsage;
        }
        const bool claimed = breaks_claim(v, impl.contract, f.c.dtype);
        std::cout << "  " << impl.label() << " " << prop << ": "
                  << (v.passed ? "pass" : claimed ? "FAIL (still failing)" : "finding (unclaimed, still failing)")
                  << "\n";
        if (!v.passed) {
          std::cout << evidence_text(v) << "\n";
          rc = std::max(rc, int(kExitFailure));
        }
      }
  }
  return rc;
}

int cmd_shrink(const ShrinkArgs& a) {
  CaseFile f;
  try {
    f = read_case_file(a.file);
  } catch (const CaseFileError& e) {
    std::fprintf(stderr, "gatecheck shrink: %s\n", e.what());
    return kExitUsage;
  }
  std::vector<Implementation> impls;
  try {
    impls = replay_impls(a.impl.empty() ? std::vector<std::string>{} : std::vector<std::string>{a.impl}, a.device, f);
  } catch (const ImplArgsError& e) {
    std::fprintf(stderr, "gatecheck shrink: %s\n", e.message.c_str());
    return e.exit_code;
  }
  const Implementation& impl = impls.front();
  const std::string property = !a.property.empty() ? a.property : f.failure ? f.failure->property : "";
  if (property.empty()) {
    std::fprintf(stderr, "gatecheck shrink: %s records no failing property; pass --property P\n", a.file.c_str());
    return kExitUsage;
  }
  std::cout << "shrinking " << describe(f.c) << " for " << impl.label() << " " << property << "\n";
  ShrinkResult r;
  try {
    r = shrink_case(impl, property, f.c, [](const std::string& step) { std::cout << "  step: " << step << "\n"; },
                    a.seconds);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "gatecheck shrink: %s\n", e.what());
    return kExitUsage;
  }
  std::string out = a.out;
  if (out.empty()) {
    out = a.file;
    const auto dot = out.rfind('.');
    if (dot != std::string::npos && out.find('/', dot) == std::string::npos) out = out.substr(0, dot);
    out += ".min.json";
  }
  CaseFile m{r.minimal, std::nullopt, {}, ""};
  m.failure = FailureRecord{impl.name, device_name(impl.device), property, r.verdict.message,
                            repro_command(out, impl.name, impl.device),
                            breaks_claim(r.verdict, impl.contract, r.minimal.dtype)};
  m.note = "shrunk by gatecheck shrink in " + std::to_string(r.steps) + " steps (" + std::to_string(r.attempts) +
           " candidates) from " + describe(f.c);
  write_case_file(out, m);
  std::cout << "minimal case after " << r.steps << " steps (" << r.attempts << " candidates): " << describe(r.minimal)
            << "\n" << evidence_text(r.verdict) << "\nwritten to " << out << "\nrepro: " << m.failure->repro << "\n";
  return kExitOk;
}

}  // namespace gatecheck
