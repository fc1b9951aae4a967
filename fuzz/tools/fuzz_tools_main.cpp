// gatecheck-fuzz-tools: the pieces of the fuzzing workflow that are not the
// fuzz loop itself.
//   seeds DIR                       write seed inputs (fuzz/make_seeds.sh names them by sha1)
//   decode INPUT...                 print what fuzz bytes decode to (--json: as a corpus file)
//   regress INPUT --out DIR [--seconds S]
//                                   turn a crash input into JSON regression case(s), each shrunk
//                                   by shrink_case (budget S, default 30 s) with its repro
//                                   command; prints one JSON line per failure (exit 3: no failure).
//                                   A call that crashes, exits or hangs is a failure too (regress.h)
//   check-impl [--gpus N]           can each implementation (--impl) run here, and are there N
//                                   GPUs? exit 2: unknown implementation, 3: cannot run
//   check-properties                is every name in GATECHECK_FUZZ_PROPERTIES a property? exit 2
//                                   naming the first unknown one and the valid names
//   check-case FILE|DIR...          run JSON cases through the fuzz checks (exit 1 on failure)
//   coverage DIR                    check that decoder inputs in DIR cover every index
//                                   pattern x dtype, value class and plan (exit 1 if not)
//   bench [--seconds S]             fuzz executions per second on small shapes, in process
//   report DIR                      write DIR/report.{json,md,html} for a campaign
//   merge-shards [--check] OUT DIR...  gather the shares of a campaign into OUT for one report
//                                   (--check: only check that they are one campaign's)
//                                   (fuzz/nightly.sh --merge; shard_merge.h)
//   spec-prints [DIR...]            a fingerprint of the cases each family of a grid of specs
//                                   materialises to, and each decoder input under DIR decodes
//                                   to for each op: two builds that print the same make the
//                                   same cases from the same seeds and inputs (spec_prints.h)
// Implementations and properties come from GATECHECK_FUZZ_IMPL / _PROPERTIES
// (op_target.h), or --impl SPEC (repeatable).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../../harness/isolate/isolate.h"
#include "../../harness/impls/plugin_stdout.h"
#include "../../case/case_json.h"
#include "../case_decoder.h"
#include "../fuzz_stats.h"
#include "../op_target.h"
#include "campaign_report.h"
#include "regress.h"
#include "seed_generator.h"
#include "shard_merge.h"
#include "spec_prints.h"

using namespace gatecheck;
using namespace gatecheck::fuzz;
namespace fs = std::filesystem;

namespace {

// printf to std::cout: this program's stdout output goes only through
// std::cout (report_only_through_cout), so that a plugin's own threads
// cannot print into it.
__attribute__((format(printf, 1, 2))) void out(const char* fmt, ...) {
  va_list ap, again;
  va_start(ap, fmt);
  va_copy(again, ap);
  const int n = std::vsnprintf(nullptr, 0, fmt, ap);
  va_end(ap);
  std::string text(size_t(n > 0 ? n : 0), '\0');
  if (n > 0) std::vsnprintf(text.data(), text.size() + 1, fmt, again);
  va_end(again);
  std::cout << text << std::flush;
}

int usage() {
  std::fprintf(stderr,
               "usage: gatecheck-fuzz-tools seeds DIR | decode [--json] INPUT... | regress INPUT --out DIR [--seconds S] "
               "[--impl SPEC]... | check-case [--impl SPEC]... FILE|DIR... | check-impl [--impl SPEC]... [--gpus N] | "
               "check-properties | bench [--seconds S] | report DIR | merge-shards [--check] OUT DIR... | spec-prints [DIR...]\n");
  return 2;
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

struct Args {
  std::vector<std::string> positional, impls;
  std::string out;
  double seconds = -1;  // bench: run time (default 5); regress: shrink budget (default 30)
  int gpus = 0;         // check-impl: GPUs the campaign needs
  bool json = false;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 2; i < argc; ++i) {
    const std::string s = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(s + " needs a value");
      return argv[++i];
    };
    if (s == "--impl") a.impls.push_back(value());
    else if (s == "--out") a.out = value();
    else if (s == "--seconds") a.seconds = std::stod(value());
    else if (s == "--gpus") a.gpus = std::stoi(value());
    else if (s == "--json") a.json = true;
    else a.positional.push_back(s);
  }
  // --impl overrides the environment for everything below (target_config reads it once).
  if (!a.impls.empty()) {
    std::string joined;
    for (const auto& i : a.impls) joined += (joined.empty() ? "" : ",") + i;
    setenv("GATECHECK_FUZZ_IMPL", joined.c_str(), 1);
  }
  return a;
}

int cmd_decode(const Args& a) {
  for (const auto& p : a.positional) {
    const auto b = read_bytes(p);
    const Case c = decode_input(b.data(), b.size());
    if (a.json) {
      CaseFile f;
      f.c = c;
      std::cout << case_to_json(f);
    } else {
      std::cout << p << ": " << describe(c) << "\n";
    }
  }
  return 0;
}

// nightly.sh asks this before it starts its workers: a fuzzer that cannot make
// its implementation exits at its first input, and a campaign of restarts
// would look like a clean one. Exit codes as `gatecheck check`'s.
int cmd_check_impl(const Args& a) {
  int rc = 0;
  for (const auto& spec : fuzz_impl_specs()) {  // the list the fuzzer makes its implementations from
    try {
      const Subject impl = make_spec(spec, fuzz_target_op());
      out("--impl %s: %s can run here\n", spec.c_str(), impl.label().c_str());
    } catch (const std::exception& e) {
      const bool unknown = std::string(e.what()).rfind("unknown implementation", 0) == 0;
      std::fprintf(stderr, "--impl %s: %s\n", spec.c_str(), e.what());
      if (!rc) rc = unknown ? 2 : 3;
    }
  }
  if (a.gpus > 0) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
    if (n < a.gpus) {
      std::fprintf(stderr, "--gpus %d: this machine has %d CUDA device(s)\n", a.gpus, n);
      if (!rc) rc = 3;
    }
  }
  return rc;
}

// nightly.sh asks this too: the fuzzer reads GATECHECK_FUZZ_PROPERTIES only
// at its first input, so a typo used to surface as a worker giving up
// mid-campaign. Read here as the fuzzer reads it.
int cmd_check_properties() {
  const std::vector<std::string> props = fuzz_properties();
  if (const std::string why = fuzz_properties_problem(props); !why.empty()) {
    std::fprintf(stderr, "%s\n", why.c_str());
    return 2;
  }
  std::string list;
  for (const auto& p : props) list += (list.empty() ? "" : ", ") + p;
  out("GATECHECK_FUZZ_PROPERTIES%s: the fuzzer checks %s\n",
              std::getenv("GATECHECK_FUZZ_PROPERTIES") ? "" : " (unset)", list.c_str());
  return 0;
}

int cmd_check_case(const Args& a) {
  std::vector<fs::path> files;
  for (const auto& p : a.positional) {
    if (!fs::exists(p)) {
      std::cout << "note: " << p << " does not exist (nothing to check there)\n";
      continue;
    }
    if (fs::is_directory(p)) {
      for (const auto& e : fs::recursive_directory_iterator(p))
        if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
    } else {
      files.push_back(p);
    }
  }
  std::sort(files.begin(), files.end());
  const TargetConfig& cfg = target_config();
  // Each file is checked as a case of its own op (a version-2 file names it):
  // the configured implementations, made for that op.
  std::map<const OpSchema*, std::vector<Subject>> impls_of = {{cfg.op, cfg.impls}};
  int failed = 0;
  for (const auto& p : files) {
    const CaseFile f = read_case_file(p.string());
    auto it = impls_of.find(f.c.op);
    if (it == impls_of.end()) {
      std::vector<Subject> made;
      for (const auto& spec : cfg.specs) made.push_back(make_spec(spec, *f.c.op));
      it = impls_of.emplace(f.c.op, std::move(made)).first;
    }
    for (size_t i = 0; i < it->second.size(); ++i)
      for (const auto& bad : check_claims(it->second[i], f.c, cfg.properties)) {
        ++failed;
        std::cout << "FAIL " << p.string() << " " << bad.signature << "\n" << bad.verdict.message << "\n";
      }
  }
  std::cout << "checked " << files.size() << " case files on " << cfg.impls.size() << " implementation(s): "
            << failed << " claimed failure(s)\n";
  return failed ? 1 : 0;
}

int cmd_coverage(const Args& a) {
  if (a.positional.size() != 1) return usage();
  std::set<std::string> seen;
  for (const auto& e : fs::directory_iterator(a.positional[0])) {
    const auto b = read_bytes(e.path().string());
    DecodeInfo info;
    const Case c = decode_input(b.data(), b.size(), &info);
    seen.insert(info.spec.index_pattern + " x " + dtype_name(c.dtype));
    seen.insert("values " + info.spec.value_class);
    seen.insert("plan " + plan_choice_name(info.plan));
  }
  std::vector<std::string> want;
  for (const auto& p : all_index_patterns())
    for (DType t : {DType::bf16, DType::f16, DType::f32}) want.push_back(p + " x " + dtype_name(t));
  for (const auto& v : value_classes_of(fuzz_target_op())) want.push_back("values " + v);
  for (int k = 0; k < plan_choices(); ++k) want.push_back("plan " + plan_choice_name(k));
  int missing = 0;
  for (const auto& w : want)
    if (!seen.count(w)) {
      std::cout << "missing: " << w << "\n";
      ++missing;
    }
  std::cout << a.positional[0] << ": " << want.size() - size_t(missing) << " of " << want.size()
            << " classes covered (index pattern x dtype, value class, plan)\n";
  return missing ? 1 : 0;
}

// In-process executions per second of the op's fuzz target body on random
// small inputs: no engine, no sanitizers, one core.
int cmd_bench(const Args& a) {
  uint64_t s = 12345;
  std::vector<uint8_t> bytes(64);
  int64_t n = 0, failures = 0;
  const std::clock_t cpu0 = std::clock();  // CPU time too: a shared machine steals wall time
  const auto t0 = std::chrono::steady_clock::now();
  double elapsed = 0;
  const double seconds = a.seconds > 0 ? a.seconds : 5;
  while (elapsed < seconds) {
    for (auto& b : bytes) b = uint8_t((s = s * 6364136223846793005ull + 1442695040888963407ull) >> 56);
    const auto found = run_fuzz_input(bytes.data(), bytes.size());
    if (!found.empty() && failures++ == 0) {  // counted, and the first one kept for a look
      std::ofstream("bench-failure.bin", std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                                 std::streamsize(bytes.size()));
      std::fprintf(stderr, "bench: a claimed failure (%s) on input bench-failure.bin:\n%s\n",
                   found[0].failure.signature.c_str(), found[0].failure.verdict.message.c_str());
    }
    ++n;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  flush_stats();
  const auto& cfg = target_config();
  std::string impls;
  for (const auto& sp : cfg.specs) impls += (impls.empty() ? "" : ",") + sp;
  const double cpu = double(std::clock() - cpu0) / CLOCKS_PER_SEC;
  out("fuzz_%s body: %lld execs in %.1f s wall, %.1f s CPU = %.0f execs/s, %.0f per CPU-second "
              "(impl %s, %zu properties, error features %s); %lld inputs with a claimed failure\n",
              fuzz_target_op().name, (long long)n, elapsed, cpu, double(n) / elapsed, double(n) / cpu, impls.c_str(), cfg.properties.size(),
              cfg.error_features ? "on" : "off", (long long)failures);
  return 0;
}

}  // namespace

// regress's isolated replays run from main(), after every static initialiser
// (the CUDA runtime registers our kernels in one; harness/isolate.h).
extern "C" {
bool gatecheck_isolate_worker_in_main = true;
}

int main(int argc, char** argv) {
  gatecheck::run_isolate_worker_if_requested();
  gatecheck::report_only_through_cout();
  if (argc < 2) return usage();
  const std::string cmd = argv[1];
  try {
    const Args a = parse(argc, argv);
    if (cmd == "seeds") {
      if (a.positional.size() != 1) return usage();
      out("wrote %d seeds under %s\n", write_seeds(a.positional[0]), a.positional[0].c_str());
      return 0;
    }
    if (cmd == "decode") return cmd_decode(a);
    if (cmd == "regress") {
      if (a.positional.size() != 1 || a.out.empty()) return usage();
      return regress_crash_input(a.positional[0], a.out, a.seconds);
    }
    if (cmd == "check-impl") return a.positional.empty() ? cmd_check_impl(a) : usage();
    if (cmd == "check-properties") return a.positional.empty() ? cmd_check_properties() : usage();
    if (cmd == "check-case") return cmd_check_case(a);
    if (cmd == "coverage") return cmd_coverage(a);
    if (cmd == "bench") return cmd_bench(a);
    if (cmd == "report") {
      if (a.positional.size() != 1) return usage();
      return write_campaign_report(a.positional[0]);
    }
    if (cmd == "spec-prints") {
      write_spec_prints(std::cout, a.positional);
      return 0;
    }
    if (cmd == "merge-shards") {
      const bool check_only = !a.positional.empty() && a.positional[0] == "--check";
      const size_t first = check_only ? 1 : 0;
      if (a.positional.size() < first + 2) return usage();
      return merge_shards(a.positional[first], {a.positional.begin() + long(first) + 1, a.positional.end()}, check_only);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gatecheck-fuzz-tools %s: %s\n", cmd.c_str(), e.what());
    return 2;
  }
  return usage();
}
