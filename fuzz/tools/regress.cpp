// Crash input -> regression JSON case(s). The input made the fuzzer stop,
// often because an implementation crashed, so replaying it in this process
// could kill the replay too (a segfaulting plugin did: the nightly campaign
// then recorded nothing). So each implementation is first checked with its
// calls in child processes (PropertyOptions::isolate, as `gatecheck check
// --isolate`): a call that dies is the failure, shrunk in children too. An
// implementation whose calls all come back is replayed in process, exactly as
// the fuzzer ran it (a plugin's state carries from call to call there, not
// across forked children), and shrunk in process.
#include "regress.h"

#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <vector>

#include "../../harness/isolate/isolate.h"
#include "../../properties/shrink/shrink.h"
#include "../case_decoder.h"
#include "../op_target.h"

namespace gatecheck::fuzz {
namespace {

// The limit of one isolated call. libFuzzer's per-input -timeout in
// nightly.sh is 10 s; an input that hangs is recorded as "hung" after this.
constexpr double kReplayTimeoutSeconds = 30;

std::vector<uint8_t> read_input(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// How the isolated child ended without a result, or "" if it returned one.
// isolate.cpp words each such status "crashed: the isolated child ... killed
// by SIGSEGV (...)", "hung: ... the isolated child ...", "exited: the isolated
// child ..." or "...: the isolated child sent a malformed result (...)", and
// the properties quote the status in the verdict's message.
std::string death_of(const Verdict& v) {
  const auto at = v.message.find(kIsolatedChildWords);
  if (at == std::string::npos) return "";
  for (const char* kind : {"crashed: ", "hung: ", "exited: "})
    if (const auto k = v.message.rfind(kind, at); k != std::string::npos && k + 40 > at)
      return v.message.substr(k, v.message.find('\n', k) - k);
  return v.message.substr(at, v.message.find('\n', at) - at);
}
// "crashed", "hung", "exited", or "no result" (a malformed one).
std::string death_kind(const std::string& death) {
  for (const char* kind : {"crashed", "hung", "exited"})
    if (death.rfind(std::string(kind) + ":", 0) == 0) return kind;
  return death.empty() ? "" : "no result";
}

void print_record(const std::string& path, const std::string& spec, const FuzzFailure& f, const Case& minimal,
                  const Case& found_as, const std::string& input, const std::string& death) {
  nlohmann::json j = {{"signature", f.signature}, {"property", f.verdict.property},
                      {"impl", spec},             {"case", path},
                      // a call that died would kill a plain repro too: report it instead
                      {"repro", repro_command(path, spec, !death.empty())},
                      {"shape", describe(minimal)},
                      {"found_as", describe(found_as)},      {"input", input}};
  if (!death.empty()) j["crash"] = death;  // the report shows how the call died
  std::cout << j.dump() << std::endl;
}

}  // namespace

int regress_crash_input(const std::string& input, const std::string& out_dir, double shrink_seconds) {
  const auto bytes = read_input(input);
  const Case c = decode_input(bytes.data(), bytes.size());
  const TargetConfig& cfg = target_config();  // known signatures are not skipped here
  const double budget = shrink_seconds > 0 ? shrink_seconds : 30;
  PropertyOptions iso;
  iso.isolate = true;
  iso.isolate_timeout_seconds = kReplayTimeoutSeconds;
  int saved = 0;
  for (size_t i = 0; i < cfg.impls.size(); ++i) {
    const Subject& impl = cfg.impls[i];
    const FoundFailure base{cfg.specs[i], impl.device, {}};
    // 1. Property by property in child processes, up to the first call that
    //    dies: the others would die the same way, each a 30 s wait if it hangs.
    std::optional<FuzzFailure> died;
    for (const auto& p : cfg.properties) {
      for (auto& f : check_claims(impl, c, {p}, iso))
        if (!death_of(f.verdict).empty()) {
          died = std::move(f);
          break;
        }
      if (died) break;
    }
    if (died) {
      const std::string death = death_of(died->verdict), kind = death_kind(death);
      Verdict last = died->verdict;
      // A smaller case must still die the same way (crashed, hung, exited).
      auto still_dies = [&](const Case& cand) {
        Verdict v = check_property(last.property, impl, cand, iso);
        if (death_kind(death_of(v)) != kind) return false;
        last = std::move(v);
        return true;
      };
      const ShrinkResult r = shrink_case_with(c, still_dies, nullptr, budget);
      FoundFailure f = base;
      f.failure = {last, died->signature};
      const std::string note = "found by fuzz_" + std::string(fuzz_target_op().name) + " from input " + input + "; the implementation " +
                               death + " (replayed in a child process); shrunk in " + std::to_string(r.steps) +
                               " steps from " + describe(c);
      const std::string path = save_failure(out_dir, r.minimal, f, note);
      print_record(path, f.spec, f.failure, r.minimal, c, input, death_of(last));
      ++saved;
      continue;
    }
    // 2. Every call came back: replay in process as the op's fuzz target does
    //    (its error-feature run first, then the claims).
    if (cfg.error_features && i < 4) (void)error_over_bound(impl, c);
    for (const auto& found : check_claims(impl, c, cfg.properties)) {
      Case minimal = c;
      FoundFailure f = base;
      f.failure = found;
      std::string note = "found by fuzz_" + std::string(fuzz_target_op().name) + " from input " + input;
      try {
        const ShrinkResult r = shrink_case(impl, found.verdict.property, c, nullptr, budget);
        minimal = r.minimal;
        f.failure.verdict = r.verdict;
        note += "; shrunk by shrink_case in " + std::to_string(r.steps) + " steps (" + std::to_string(r.attempts) +
                " tries" + (r.cut_short ? ", cut short" : "") + ") from " + describe(c);
      } catch (const std::exception& e) {
        note += "; not shrunk: " + std::string(e.what());
      }
      const std::string path = save_failure(out_dir, minimal, f, note);
      print_record(path, f.spec, found, minimal, c, input, "");
      ++saved;
    }
  }
  return saved ? 0 : 3;
}

}  // namespace gatecheck::fuzz
