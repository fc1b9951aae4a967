#include "op_target.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "../case/case_json.h"
#include "../findings/failure_files.h"
#include "../findings/repro_command.h"
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

extern "C" __attribute__((weak)) const char* gatecheck_fuzz_op() { return "gate_residual"; }

SpecParts split_spec(const std::string& spec) {
  if (ends_with(spec, "@cuda")) return {spec.substr(0, spec.size() - 5), Device::cuda};
  if (ends_with(spec, "@cpu")) return {spec.substr(0, spec.size() - 4), Device::cpu};
  return {spec, spec == "cuda" ? Device::cuda : Device::cpu};
}

Subject make_spec(const std::string& spec, const OpSchema& op) {
  const SpecParts s = split_spec(spec);
  return make_subject(s.name, s.device, op);
}

std::string repro_command(const std::string& path, const std::string& spec, bool isolate) {
  const SpecParts s = split_spec(spec);
  return gatecheck::repro_command(path, s.name, s.device, isolate);
}

std::vector<std::string> fuzz_impl_specs() {
  std::vector<std::string> specs = split(std::getenv("GATECHECK_FUZZ_IMPL"));
  if (specs.empty()) specs = {"host"};
  return specs;
}

const OpSchema& fuzz_target_op() {
  static const OpSchema* const schema = [] {
    const char* op = std::getenv("GATECHECK_FUZZ_OP");
    const std::string op_name = op && *op ? op : gatecheck_fuzz_op();
    const OpSchema* found = find_op_schema(op_name);
    if (!found) {
      std::fprintf(stderr, "fuzz_%s: GATECHECK_FUZZ_OP: %s\n", gatecheck_fuzz_op(), unknown_op(op_name).c_str());
      std::exit(2);
    }
    return found;
  }();
  return *schema;
}

const TargetConfig& target_config() {
  static const TargetConfig cfg = [] {
    TargetConfig c;
    c.op = &fuzz_target_op();
    c.name = "fuzz_" + std::string(gatecheck_fuzz_op());
    c.specs = fuzz_impl_specs();
    for (const auto& s : c.specs) {
      try {
        c.impls.push_back(make_spec(s, *c.op));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: GATECHECK_FUZZ_IMPL: cannot make '%s': %s\n", c.name.c_str(), s.c_str(), e.what());
        std::exit(2);
      }
    }
    c.properties = fuzz_properties();
    // An unknown name would be skipped as "not claimed": a fuzzer checking nothing.
    if (const std::string why = fuzz_properties_problem(c.properties); !why.empty()) {
      std::fprintf(stderr, "%s: %s\n", c.name.c_str(), why.c_str());
      std::exit(2);
    }
    c.ignore = split(std::getenv("GATECHECK_FUZZ_IGNORE"));
    if (const char* d = std::getenv("GATECHECK_FUZZ_FAILURES"); d && *d) c.failures_dir = d;
    if (const char* e = std::getenv("GATECHECK_FUZZ_ERROR_FEATURES")) c.error_features = std::string(e) != "0";
    return c;
  }();
  return cfg;
}

Case decode_input(const uint8_t* data, size_t size, DecodeInfo* info) {
  return decode_case(*target_config().op, data, size, {}, info);
}

std::vector<FoundFailure> run_fuzz_input(const uint8_t* data, size_t size) {
  const TargetConfig& cfg = target_config();
  DecodeInfo info;
  const Case c = decode_input(data, size, &info);
  note_case_features(c, info);
  count_case(c, info);
  std::vector<FoundFailure> found;
  for (size_t i = 0; i < cfg.impls.size(); ++i) {
    if (cfg.error_features && i < 4) {
      const auto e = error_over_bound(cfg.impls[i], c);
      for (size_t o = 0; o < e.size() && o < 4; ++o)  // (the features' room: four outputs an implementation)
        if (e[o] >= 0) note_error_feature(int(i), int(o), e[o]);
    }
    for (auto& f : check_claims(cfg.impls[i], c, cfg.properties)) {
      if (std::find(cfg.ignore.begin(), cfg.ignore.end(), f.signature) != cfg.ignore.end()) continue;
      found.push_back({cfg.specs[i], cfg.impls[i].device, std::move(f)});
    }
  }
  return found;
}

std::string save_failure(const std::string& dir, const Case& c, const FoundFailure& f, const std::string& note) {
  std::filesystem::create_directories(dir);
  CaseFile file;
  file.c = c;
  const Verdict& v = f.failure.verdict;
  return save_failure_file(dir, file, case_digest(c), {split_spec(f.spec).name, f.device, v.property, true}, v,
                           (note.empty() ? "found by " + target_config().name : note) + "; signature " +
                               f.failure.signature);
}

}  // namespace gatecheck::fuzz
