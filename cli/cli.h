// The gatecheck command line: one function per subcommand. Each returns the
// process exit code (0 ok, 1 claimed property failed / failure reproduced,
// 2 usage or bad input, 3 an implementation could not run).
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace gatecheck {

// kExitInconclusive: nothing failed, but a claimed property ran fewer cases
// than its floor (kCaseFloor); kExitNotReproduced: repro replayed a failure
// that did not show again within its attempts.
enum ExitCode {
  kExitOk = 0,
  kExitFailure = 1,
  kExitUsage = 2,
  kExitCannotRun = 3,
  kExitInconclusive = 4,
  kExitNotReproduced = 5
};

// The whole command line: parses argv and runs the subcommand. main() calls
// it; so does any program that adds ops of its own before it (a test's).
int gatecheck_main(int argc, char** argv);

// `gatecheck ops [NAME]`: every op (or one) as the catalog describes it.
int cmd_ops(const std::string& name);

// Bounds of check's --max-rows, --max-dim and --max-gates, and of their
// rows x dim: the oracle holds several float64 copies of every tensor.
constexpr unsigned long long kMaxGenRows = 1ull << 20, kMaxGenDim = 1ull << 16, kMaxGenGates = 1ull << 20;
constexpr unsigned long long kMaxGenElements = 1ull << 24;
// The most worker threads `--jobs` takes (each keeps its own buffers).
constexpr unsigned long long kMaxJobs = 1024;
// The op of a command given no --op: every command written before there
// were other ops keeps its meaning.
constexpr const char* kDefaultOp = "gate_residual";

struct CheckArgs {
  std::string op = kDefaultOp;
  std::vector<std::string> impls;
  std::string device;        // "", "cpu" or "cuda"
  double seconds = 30;
  double shrink_seconds = 60;  // each failure's shrink, on top of `seconds`
  long long cases = 0;
  unsigned long long seed = 0;
  bool seed_given = false;
  std::string properties;    // comma-separated; "" = default set
  std::string claims;        // comma-separated; overrides contracts for this run
  std::string valid;         // "rows>=1,dim>=1": narrows every contract's valid inputs for this run
  std::string corpus = "corpus/found";
  std::string json;
  bool isolate = false;
  double timeout = 60;       // --isolate: seconds one call may take before it is reported as hung
  double load_timeout = 60;  // seconds the implementations may take to load before the run counts as hung
  long long jobs = 0;        // worker threads (0: the machine's cores)
  // The generator's largest rows, dim and gates (0: its defaults, GenLimits),
  // and its smallest rows, dim and gates (0: its defaults, which are 0).
  long long max_rows = 0, max_dim = 0, max_gates = 0;
  long long min_rows = 0, min_dim = 0, min_gates = 0;
  // The scale tier (properties/scale_tier.h): its share of each budget (< 0:
  // the device's default; 0: off), and its memory budget (0: 60% of free).
  double scale_share = -1;
  unsigned long long scale_memory_gib = 0;
  bool stop_on_failure = false;  // end the run at its first claimed failure
};
int cmd_check(const CheckArgs& a);

struct ReproArgs {
  std::vector<std::string> files;
  std::vector<std::string> impls;
  std::string device;
  std::string property;      // "" = the one recorded in the file, else the default set
  bool isolate = false;
  double timeout = 60;
  double load_timeout = 60;  // as check's
  // A recorded failure of a property whose failures can depend on scheduling
  // (PropertyInfo::flaky_failures) is replayed up to `attempts` times, or
  // until `seconds` have gone, before it is called not reproduced.
  int64_t attempts = 100;
  double seconds = 60;
};
int cmd_repro(const ReproArgs& a);

struct ShrinkArgs {
  std::string op;            // "" = the file's
  std::string file;
  std::string impl;
  std::string device;
  std::string property;
  std::string out;           // "" = next to the input, *.min.json
  double seconds = 120;
  bool isolate = false;
  double timeout = 60;
  double load_timeout = 60;  // as check's
};
int cmd_shrink(const ShrinkArgs& a);

// `bench --harness` (properties/harness_bench.h) with check's in-flight
// snapshots; json as run_harness_bench takes it.
struct HarnessBenchOptions;
struct Subject;
int harness_bench_with_snapshots(const std::vector<Subject>& impls, HarnessBenchOptions o, const std::string& json);

struct SweepArgs {
  std::string op = kDefaultOp;
  std::vector<std::string> impls;
  std::string device;          // "", "cpu" or "cuda"
  bool quick = false;
  std::string json, html, compare;
  std::string corpus = "corpus/found";
  std::vector<std::string> validate;  // reports to check against the seed's schema and counts; runs nothing
  bool skip_unavailable = false;
  long long keep_failures = 8; // per check and implementation (0: all)
  double timeout = 600;        // seconds without progress before the sweep counts as hung
  double load_timeout = 60;    // as check's
  long long reps = -1;         // latency: timed runs (-1: the grid's; 0: no latency)
};
void add_sweep_options(CLI::App* app, SweepArgs* a);
int cmd_sweep(const SweepArgs& a);

// --load-timeout, as every command that loads implementations takes it.
// `for_what` starts its description ("--harness: " for bench's).
void add_load_timeout_option(CLI::App* app, double* seconds, const std::string& for_what = "");

// Helpers shared by the subcommands.
std::vector<std::string> split_list(const std::string& s);
// The properties `list`, the value of `option` (--properties, --property), names, with "" in
// *problem; or a usage message naming the option: a name is unknown, or a property does not
// apply to `op` (given one). (An empty list or item is the option's name_list validator's.)
struct OpSchema;
std::vector<std::string> property_list(const std::string& option, const std::string& list, const OpSchema* op,
                                       std::string* problem);
bool parse_device(const std::string& s, int* device);  // "cpu"/"cuda" -> 0/1
// Can `file` be written: opened for writing, or created and removed again (errno says why not).
bool writable_path(const std::string& file);
// Can files be made in `dir`: a folder where a file can be created (ENOTDIR for a file).
bool writable_folder(const std::string& dir);
// mkdir -p.
void make_dirs(const std::string& path);

}  // namespace gatecheck
