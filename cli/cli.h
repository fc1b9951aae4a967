// The gatecheck command line: one function per subcommand. Each returns the
// process exit code (0 ok, 1 claimed property failed / failure reproduced,
// 2 usage or bad input, 3 an implementation could not run).
#pragma once

#include <string>
#include <vector>

namespace gatecheck {

enum ExitCode { kExitOk = 0, kExitFailure = 1, kExitUsage = 2, kExitCannotRun = 3 };

// Bounds of check's --max-rows, --max-dim and --max-gates, and of their
// rows x dim: the oracle holds several float64 copies of every tensor.
constexpr unsigned long long kMaxGenRows = 1ull << 20, kMaxGenDim = 1ull << 16, kMaxGenGates = 1ull << 20;
constexpr unsigned long long kMaxGenElements = 1ull << 24;
// The most worker threads `--jobs` takes (each keeps its own buffers).
constexpr unsigned long long kMaxJobs = 1024;

struct CheckArgs {
  std::vector<std::string> impls;
  std::string device;        // "", "cpu" or "cuda"
  double seconds = 30;
  long long cases = 0;
  unsigned long long seed = 0;
  bool seed_given = false;
  std::string properties;    // comma-separated; "" = default set
  std::string claims;        // comma-separated; overrides contracts for this run
  std::string corpus = "corpus/found";
  std::string json;
  bool isolate = false;
  double timeout = 60;       // --isolate: seconds one call may take before it is reported as hung
  long long jobs = 0;        // worker threads (0: the machine's cores)
  // The generator's largest rows, dim and gates (0: its defaults, GenLimits),
  // and its smallest rows, dim and gates (0: its defaults, which are 0).
  long long max_rows = 0, max_dim = 0, max_gates = 0;
  long long min_rows = 0, min_dim = 0, min_gates = 0;
};
int cmd_check(const CheckArgs& a);

struct ReproArgs {
  std::vector<std::string> files;
  std::vector<std::string> impls;
  std::string device;
  std::string property;      // "" = the one recorded in the file, else the default set
  bool isolate = false;
  double timeout = 60;
};
int cmd_repro(const ReproArgs& a);

struct ShrinkArgs {
  std::string file;
  std::string impl;
  std::string device;
  std::string property;
  std::string out;           // "" = next to the input, *.min.json
  double seconds = 120;
  bool isolate = false;
  double timeout = 60;
};
int cmd_shrink(const ShrinkArgs& a);

// `bench --harness` (properties/harness_bench.h) with check's in-flight
// snapshots; json as run_harness_bench takes it.
struct HarnessBenchOptions;
struct Subject;
int harness_bench_with_snapshots(const std::vector<Subject>& impls, HarnessBenchOptions o, const std::string& json);

// Helpers shared by the subcommands.
std::vector<std::string> split_list(const std::string& s);
bool parse_device(const std::string& s, int* device);  // "cpu"/"cuda" -> 0/1
// An implementation's name as part of a file name: its last 40 characters,
// and where it is longer a hash of the whole, so that two plugins of the same
// name in different folders do not share files.
std::string file_safe(const std::string& s);
// Can `file` be written: it exists and is writable, or its folder is (errno says why not).
bool writable_path(const std::string& file);

}  // namespace gatecheck
