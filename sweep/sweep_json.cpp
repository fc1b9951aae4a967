#include "sweep_json.h"

#include <cuda_runtime.h>
#include <sys/utsname.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "sweep_fields.h"
#include "sweep_operator_report.h"

#if GATECHECK_HAVE_TORCH
#include "../kernels/torch/torch_eager.h"
#endif

namespace gatecheck {

using nlohmann::json;

namespace {

json or_null(double v) { return v >= 0 && std::isfinite(v) ? json(v) : json(nullptr); }
json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }  // NaN/Inf: null, never a lie

// The first line of a command's output, or "" (git and the like: best effort).
std::string first_line_of(const std::string& cmd) {
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "";
  char buf[512] = {0};
  std::string line = fgets(buf, sizeof buf, p) ? buf : "";
  pclose(p);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  return line;
}

std::string version_string(int v) {  // 13000 -> "13.0"
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

// "580.95.05" from /proc/driver/nvidia/version's first line, or "".
std::string nvidia_driver() {
  std::ifstream f("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(f, line)) return "";
  const auto at = line.find("Kernel Module");
  if (at == std::string::npos) return line;
  std::string rest = line.substr(at + 13);
  const auto b = rest.find_first_not_of(' ');
  if (b == std::string::npos) return "";
  rest = rest.substr(b);
  return rest.substr(0, rest.find(' '));
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(line.find_first_not_of(' ', colon + 1));
    }
  return "";
}

json timing_json(const CallTiming& t) {
  return {{"event_us", or_null(t.event_us)},       {"gpu_us", or_null(t.gpu_us)},
          {"wall_us", or_null(t.wall_us)},         {"copy_event_us", or_null(t.copy_event_us)},
          {"copy_gpu_us", or_null(t.copy_gpu_us)}, {"copy_wall_us", or_null(t.copy_wall_us)},
          {"bytes", t.bytes},                      {"gpu_method", t.gpu_method}};
}

std::string source_of(const SweepImplResult& r, const OpSchema& op) {
  if (r.spec == "host") return "gatecheck host: the CUDA kernels' algorithm compiled for the CPU";
  if (r.spec == "cuda") return "gatecheck cuda: the project's CUDA kernels, through the plugin ABI";
  if (r.spec == "torch-eager" && &op == &gate_residual_schema())
    return "gatecheck torch-eager: LibTorch res + gate.index_select(0, index) * y with autograd (the prior art's "
           "diffusers formulation), through the plugin ABI";
  if (r.spec == "torch-eager")
    return std::string("gatecheck torch-eager: LibTorch's eager composition of ") + op.name +
           " with autograd (the prior art's provider), through the plugin ABI";
  return r.spec;
}

// The grid's data in words, from the op's inputs and how each is filled.
std::string data_words(const SweepGrid& g) {
  std::string normal, small;
  for (const OpInput& in : g.op->inputs) {
    if (in.role == Role::index) continue;
    std::string& list = in.fill == Fill::small_factor ? small : normal;
    list += (list.empty() ? "" : ", ") + std::string(in.name);
  }
  std::string s = normal + " N(0,1)";
  if (!small.empty()) s += ", " + small + " N(0,1) x 0.1";
  s += ", each row a uniform gate of " + std::to_string(g.gates) + ", in the dtype";
  for (const OpScalar& sc : g.op->scalars) {
    char v[32];
    std::snprintf(v, sizeof v, "%g", sc.default_value);
    s += std::string("; ") + sc.name + " " + v;
  }
  return s;
}

json failure_json(const SweepFailure& f) {
  json j = {{"check", f.check},
            {"property", f.property},
            {"verdict", verdict_word(false, f.claimed)},
            {"seed", f.seed},
            {"full_batch", f.full_rows},
            {"output", f.output},
            {"element", {f.at_row, f.at_col}},
            {"bits", f.bits},
            {"reference_bits", f.want_bits},
            {"detail", f.detail},
            {"case_file", f.case_file.empty() ? json(nullptr) : json(f.case_file)},
            {"repro", f.repro.empty() ? json(nullptr) : json(f.repro)},
            {"replayed", f.replayed},
            {"replay_note", f.replay_note}};
  if (f.batch_rows > 0) j.update({{"batch", f.batch_rows}, {"position", f.position}, {"row", f.row}});
  return j;
}

// The seed's batch_invariance block, field for field.
// ran_through: false when an error ended the implementation's sweep (then
// batch_invariant is false: it was not shown).
json seed_invariance(const InvarianceResult& v, const SweepGrid& g, bool ran_through) {
  json all = json::object();
  for (const auto& [n, c] : v.all_rows)
    all[std::to_string(n)] = {{"rows", c.rows}, {"fwd_differ", c.fwd_differ}, {"rowgrad_differ", c.rowgrad_differ}};
  json first = json::array();
  for (const SweepFailure& f : v.sweep_first)
    first.push_back({{"seed", f.seed}, {"batch", f.batch_rows}, {"position", f.position}, {"row", f.row}});
  const int64_t n = g.full_batches.empty() ? 0 : g.full_batches.back();
  return {{"all_rows", all},
          {"params_repeatable", v.params_repeatable},
          // gatecheck's, beside it: the row reductions the same however the
          // batch is split over ranks or micro-batches (gatecheck.split_invariance)
          {"split_invariant", v.split_invariant() ? json(*v.split_invariant()) : json(nullptr)},
          {"full_vs_sub_batches",
           {{"full_batch", g.big_batch},
            {"sub_batch_sizes", g.sub_batch_sizes},
            {"sub_batches", v.sub_batches},
            {"fwd_differ", v.sub_fwd_differ},
            {"rowgrad_differ", v.sub_rowgrad_differ}}},
          {"batch_size_sweep",
           {{"batch_sizes", sweep_batch_sizes(n)},
            {"probe_rows", probe_rows(n)},
            {"comparisons", v.comparisons},
            {"differ", v.sweep_differ},
            {"first_failures", first}}},
          {"batch_invariant", ran_through && v.batch_invariant()}};
}

json seed_accuracy(const std::vector<AccuracyAt>& acc, bool gpu, const OpSchema& op) {
  json j = json::object();
  const int fwd = seed_forward_output(op);
  for (const AccuracyAt& a : acc) {
    if (a.rows == 0) continue;
    // A call that failed compared nothing: its errors are null, with "error" saying why.
    auto rel = [&](int k) {
      return k >= 0 && size_t(k) < a.outputs.size() ? number(a.outputs[size_t(k)].rel_err) : json(nullptr);
    };
    json grads = json::object();
    for (const SeedField& f : seed_grad_fields(op)) grads[f.key] = rel(int(f.output));
    json row = {{"fwd_rel_err", rel(fwd)}, {"grad_rel_err", grads}};
    // The prior art's fwd_us and fwd_bwd_us: CUDA-event medians; on the CPU the wall clock's.
    const bool timed = a.latency.has_value();
    row["fwd_us"] = !timed ? json(nullptr) : or_null(gpu ? a.latency->fwd.event_us : a.latency->fwd.wall_us);
    row["fwd_bwd_us"] = !timed ? json(nullptr) : or_null(gpu ? a.latency->fwd_bwd.event_us : a.latency->fwd_bwd.wall_us);
    if (!a.error.empty()) row["error"] = a.error;
    j[std::to_string(a.rows)] = row;
  }
  return j;
}

// gatecheck.split_invariance: the splits, how the parts were combined, and
// the first split that differed, with its first differing element.
json split_json(const InvarianceResult& v) {
  json first = nullptr;
  if (const auto& f = v.split_first) {
    const BatchPlan& p = *f->plan;
    std::vector<size_t> sizes;
    for (const auto& b : p.batches) sizes.push_back(b.size());
    first = {{"seed", f->seed},
             {"rows", f->full_rows},
             {"split", {{"kind", p.kind}, {"parts", p.batches.size()}, {"part_rows", sizes}}},
             {"output", f->output},
             {"element", {f->at_row, f->at_col}},
             {"bits", f->bits},
             {"full_batch_bits", f->want_bits},
             {"claimed", f->claimed},
             {"detail", f->detail}};
  }
  return {{"invariant", v.split_invariant() ? json(*v.split_invariant()) : json(nullptr)},
          {"splits", v.split_cases},
          {"splits_failed", v.splits.failed},
          {"elements_compared", v.splits.compared},
          {"combine", v.split_combine},
          {"plan",
           "each full batch in 2 and 8 contiguous micro-batches, dealt to 4 ranks in turn, and each row in a random "
           "one of 64 ranks (no more ranks than rows; empty ones dropped); the parts' row reductions combined in "
           "rank order and compared bit for bit with the full batch's"},
          {"first_failure", first}};
}

json ours(const SweepImplResult& r, const SweepGrid& g) {
  const InvarianceResult& v = r.invariance;
  json verdicts = {{"batch_invariant", v.verdict()},
                   {"all_rows", v.all_rows_tally.verdict()},
                   {"params_repeatable", v.repeat_tally.verdict()},
                   {"full_vs_sub_batches", v.sub_tally.verdict()},
                   {"batch_size_sweep", v.sweep_tally.verdict()},
                   {"segment_invariance", v.segments.verdict()},
                   {"split_invariance", v.splits.verdict()}};
  std::string acc = "pass", eager = "pass";
  auto worse = [](std::string& a, const std::string& b) {
    if (b == "fail" || (b == "finding" && a == "pass")) a = b;
  };
  json accuracy = json::object(), latency = json::object();
  for (const AccuracyAt& a : r.accuracy) {
    if (a.rows == 0) continue;
    worse(acc, a.error.empty() ? a.verdict : "fail");
    worse(eager, a.error.empty() ? a.eager_verdict : "fail");
    json outs = json::object();
    for (size_t k = 0; k < a.outputs.size(); ++k) {
      const OutputAccuracy& o = a.outputs[k];
      outs[a.output_names[k]] = {{"verdict", o.verdict},
                               {"elements", o.elements},
                               {"outside_bound", o.outside_bound},
                               {"max_err_over_bound", number(o.max_err_over_bound)},
                               {"max_ulps", number(o.max_ulps)},
                               {"rel_err", number(o.rel_err)},
                               {"eager_differ", o.eager_differ < 0 ? json(nullptr) : json(o.eager_differ)}};
    }
    accuracy[std::to_string(a.rows)] = {{"rows", a.rows},       {"dim", a.dim},   {"verdict", a.verdict},
                                        {"eager_exact", a.eager_verdict}, {"outputs", outs}};
    if (!a.error.empty()) accuracy[std::to_string(a.rows)]["error"] = a.error;
    if (a.latency) {
      latency[std::to_string(a.rows)] = {{"fwd", timing_json(a.latency->fwd)},
                                         {"fwd_bwd", timing_json(a.latency->fwd_bwd)}};
      if (a.latency->bwd) latency[std::to_string(a.rows)]["bwd"] = timing_json(*a.latency->bwd);
    }
  }
  verdicts["accuracy"] = acc;
  verdicts["eager_exact"] = eager;
  // An error on valid input ends the implementation's sweep: it failed, and
  // what it did not reach cannot pass.
  if (!r.error.empty())
    for (auto& [k, v] : verdicts.items()) v = "fail";
  json failures = json::array();
  for (const SweepFailure& f : r.failures) failures.push_back(failure_json(f));
  std::vector<uint64_t> sub_seeds(g.seeds.begin(), g.seeds.begin() + long(std::min(g.sub_batch_seeds, g.seeds.size())));
  json j = {{"contract", r.contract},
            {"verdicts", verdicts},
            {"segment_invariance",
             {{"cases", v.segment_cases},
              {"gate_segments_compared", v.segments.compared},
              {"cases_failed", v.segments.failed},
              {"plan", "each used gate's rows alone, in row order, and the used gates split in two batches"}}},
            {"split_invariance", split_json(v)},
            {"accuracy", accuracy},
            {"latency", latency},
            {"seeds",
             {{"all_rows", g.seeds},
              {"params_repeatable", g.seeds},
              {"batch_size_sweep", g.seeds},
              {"full_vs_sub_batches", sub_seeds},
              {"segment_invariance", g.seeds},
              {"split_invariance", g.seeds},
              {"accuracy_latency", g.accuracy_seed},
              {"case_streams", "index_seed = seed*1000+1, value_seed = seed*1000+2 (gatecheck's generator)"},
              {"batch_size_sweep_other_rows", "a permutation a size and probe from gatecheck's Prng(seed)"}}},
            {"failed_comparisons", r.failed_by_check},
            {"failures", failures}};
  if (!r.error.empty()) j["error"] = r.error;
  return j;
}

}  // namespace

json sweep_timing_words() {
  return {{"event_us",
           "CUDA events recorded before and after each call on the default stream, calls queued as the host issues "
           "them; median of the timed runs after the warm-ups (the prior art's method; its fwd_us and fwd_bwd_us)"},
          {"gpu_us",
           "GPU time only, as gatecheck bench measures it: each batch of 10 runs queued behind a hold kernel and let "
           "go at once, events around each run (see gpu_method per figure)"},
          {"wall_us",
           "the host's clock from the call until its results are ready (a device synchronise after it): a training "
           "step's view, with every host synchronise and allocation inside the call"},
          {"copy_*_us", "a copy of the same bytes (half of them read and written), timed the same way"},
          {"bytes", "each input read once and each output written once (gatecheck bench's count)"},
          {"cpu", "on the CPU there are no events: wall_us only, and the seed fields fwd_us and fwd_bwd_us are wall-clock"},
          {"calls", "each implementation as gatecheck calls it, through its plugin ABI (or Python door): the "
                    "torch-eager and cuda adapters synchronise the device in every call"}};
}

json sweep_environment() {
  json e;
  int ndev = 0;
  const bool gpu = cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0;
  if (gpu) {
    cudaDeviceProp p{};
    cudaGetDeviceProperties(&p, 0);
    e["gpu"] = p.name;
    e["capability"] = {p.major, p.minor};
    e["sm_count"] = p.multiProcessorCount;
    e["l2_bytes"] = p.l2CacheSize;
  } else {
    e["gpu"] = nullptr;
    e["capability"] = nullptr;
  }
  const std::string drv = nvidia_driver();
  e["driver"] = drv.empty() ? json(nullptr) : json(drv);
  int rt = 0, dv = 0;
  e["cuda"] = cudaRuntimeGetVersion(&rt) == cudaSuccess ? json(version_string(rt)) : json(nullptr);
  e["cuda_driver_api"] = gpu && cudaDriverGetVersion(&dv) == cudaSuccess ? json(version_string(dv)) : json(nullptr);
#if GATECHECK_HAVE_TORCH
  e["torch"] = libtorch_version();
  e["torch_is"] = "the LibTorch gatecheck is built against (torch-eager); a python: implementation runs its own torch";
#else
  e["torch"] = nullptr;
#endif
  const std::string cpu = cpu_model();
  e["cpu"] = cpu.empty() ? json(nullptr) : json(cpu);
  e["cpu_threads"] = std::thread::hardware_concurrency();
  utsname u{};
  if (uname(&u) == 0) e["os"] = std::string(u.sysname) + " " + u.release + " " + u.machine;
  return e;
}

json sweep_report_json(const SweepRun& run, const json& environment, const std::string& command) {
  const SweepGrid& g = run.grid;
  json j;
  j["kind"] = "gatecheck_sweep";
  j["format_version"] = 1;
  j["op"] = g.op->name;
  j["gatecheck_version"] = GATECHECK_VERSION;
  // The commit: $GATECHECK_COMMIT, else the source tree's git (null without either).
  const char* env_commit = std::getenv("GATECHECK_COMMIT");
  const std::string git = "git -C '" + std::string(GATECHECK_SOURCE_DIR) + "' ";
  const std::string commit = env_commit && *env_commit ? env_commit : first_line_of(git + "rev-parse HEAD 2>/dev/null");
  j["commit"] = commit.empty() ? json(nullptr) : json(commit);
  if (env_commit && *env_commit) j["tracked_tree_dirty"] = nullptr;
  else if (commit.empty()) j["tracked_tree_dirty"] = nullptr;
  else j["tracked_tree_dirty"] = !first_line_of(git + "status --porcelain --untracked-files=no 2>/dev/null").empty();
  j["command"] = command;
  j["environment"] = environment;
  j["quick"] = g.quick;
  j["quick_scaling"] = g.quick ? json(g.quick_scaling) : json(nullptr);
  j["grid"] = {{"dtype", dtype_name(g.dtype)},
               {"dim", g.dim},
               {"gates", g.gates},
               {"seeds", g.seeds},
               {"full_batches", g.full_batches},
               {"big_batch", g.big_batch},
               {"sub_batch_sizes", g.sub_batch_sizes},
               {"sub_batch_seeds", g.sub_batch_seeds},
               {"accuracy_rows", g.accuracy_rows},
               {"accuracy_dim", g.accuracy_dim},
               {"accuracy_seed", g.accuracy_seed},
               {"warmup", g.warmup},
               {"reps", g.reps},
               {"data", data_words(g)}};
  j["timing"] = sweep_timing_words();
  j["seconds"] = run.seconds;
  j["interrupted"] = run.interrupted;
  j["complete"] = run.complete;
  json plain = json::object();
  for (const SweepImplResult& r : run.impls) {
    if (!r.unavailable.empty()) {
      plain[r.label] = {{"unavailable", r.unavailable}};
      continue;
    }
    plain[r.label] = {{"source", source_of(r, *g.op)},
                      {"has_backward", true},
                      {"spec", r.spec},
                      {"device", device_name(r.device)},
                      {"batch_invariance", seed_invariance(r.invariance, g, r.error.empty())},
                      {"accuracy_latency", seed_accuracy(r.accuracy, r.device == Device::cuda, *g.op)},
                      {"gatecheck", ours(r, g)}};
    if (g.op->prior_art_operator_report) plain[r.label]["operator_report"] = operator_report_json(r, *g.op);
  }
  j["results"] = {{"plain", plain}};
  return j;
}

}  // namespace gatecheck
