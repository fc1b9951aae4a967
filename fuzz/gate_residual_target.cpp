#include "gate_residual_target.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "../case/case_json.h"
#include "case_decoder.h"
#include "fuzz_features.h"
#include "fuzz_stats.h"

namespace gatecheck::fuzz {
namespace {

std::vector<std::string> split(const char* s) {
  std::vector<std::string> out;
  if (!s) return out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

Subject make_spec(const std::string& spec) {
  std::string name = spec;
  Device d = spec == "cuda" ? Device::cuda : Device::cpu;
  if (ends_with(spec, "@cuda")) {
    name = spec.substr(0, spec.size() - 5);
    d = Device::cuda;
  } else if (ends_with(spec, "@cpu")) {
    name = spec.substr(0, spec.size() - 4);
    d = Device::cpu;
  }
  return make_subject(name, d);
}

std::vector<std::string> fuzz_impl_specs() {
  std::vector<std::string> specs = split(std::getenv("GATECHECK_FUZZ_IMPL"));
  if (specs.empty()) specs = {"host"};
  return specs;
}

const TargetConfig& target_config() {
  static const TargetConfig cfg = [] {
    TargetConfig c;
    c.specs = fuzz_impl_specs();
    for (const auto& s : c.specs) {
      try {
        c.impls.push_back(make_spec(s));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "fuzz_gate_residual: GATECHECK_FUZZ_IMPL: cannot make '%s': %s\n", s.c_str(), e.what());
        std::exit(2);
      }
    }
    c.properties = fuzz_properties();
    // An unknown name would be skipped as "not claimed": a fuzzer checking nothing.
    if (const std::string why = fuzz_properties_problem(c.properties); !why.empty()) {
      std::fprintf(stderr, "fuzz_gate_residual: %s\n", why.c_str());
      std::exit(2);
    }
    c.ignore = split(std::getenv("GATECHECK_FUZZ_IGNORE"));
    if (const char* d = std::getenv("GATECHECK_FUZZ_FAILURES"); d && *d) c.failures_dir = d;
    if (const char* e = std::getenv("GATECHECK_FUZZ_ERROR_FEATURES")) c.error_features = std::string(e) != "0";
    return c;
  }();
  return cfg;
}

std::vector<FoundFailure> run_fuzz_input(const uint8_t* data, size_t size) {
  const TargetConfig& cfg = target_config();
  DecodeInfo info;
  const Case c = decode_case(data, size, {}, &info);
  note_case_features(c, info);
  count_case(c, info);
  std::vector<FoundFailure> found;
  for (size_t i = 0; i < cfg.impls.size(); ++i) {
    if (cfg.error_features && i < 4) {
      const auto e = error_over_bound(cfg.impls[i], c);
      for (int o = 0; o < 4; ++o)
        if (e[size_t(o)] >= 0) note_error_feature(int(i), o, e[size_t(o)]);
    }
    for (auto& f : check_claims(cfg.impls[i], c, cfg.properties)) {
      if (std::find(cfg.ignore.begin(), cfg.ignore.end(), f.signature) != cfg.ignore.end()) continue;
      found.push_back({cfg.specs[i], cfg.impls[i].device, std::move(f)});
    }
  }
  return found;
}

std::string repro_command(const std::string& path, const std::string& spec) {
  return "gatecheck repro " + path + " --impl " + spec;
}

std::string save_failure(const std::string& dir, const Case& c, const FoundFailure& f, const std::string& note) {
  std::filesystem::create_directories(dir);
  std::string sig = f.failure.signature;
  for (char& ch : sig)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '-') ch = '_';
  const std::string path = dir + "/" + sig + "-" + case_digest(c) + ".json";
  CaseFile file;
  file.c = c;
  const Verdict& v = f.failure.verdict;
  FailureRecord r;
  r.impl = f.spec;
  r.device = device_name(f.device);
  r.property = v.property;
  r.message = v.message.empty() ? evidence_text(v) : v.message;
  r.repro = repro_command(path, f.spec);
  r.claimed = true;
  file.failure = r;
  file.note = note + "; signature " + f.failure.signature;
  write_case_file(path, file);
  return path;
}

}  // namespace gatecheck::fuzz
