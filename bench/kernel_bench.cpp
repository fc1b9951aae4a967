// gatecheck-bench: see kernel_bench.h. Bytes are counted as each input read
// once and each output written once:
//   forward   s*(3*rows*dim + gates*dim) + 8*rows
//   backward  s*(4*rows*dim + 2*gates*dim) + 8*rows
#include "kernel_bench.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "../kernels/cuda/gate_residual_cuda.h"
#include "bench_device.h"
#include "bench_options.h"
#include "rmsnorm_bench.h"
#if GATECHECK_BENCH_TORCH
#include "torch_eager_bench.h"
#endif

namespace gatecheck {

namespace {

using bench::cuda_ok;

struct Shape {
  int dtype;  // gatecheck_dtype
  int64_t rows, dim, gates;
  std::string gates_rule, pattern;
};

int64_t gates_for(const std::string& rule, int64_t rows) {
  if (rule.rfind("rows/", 0) == 0) return std::max<int64_t>(1, rows / std::stoll(rule.substr(5)));
  return std::stoll(rule);
}

std::vector<int64_t> make_index(const Shape& s, uint64_t seed) {
  std::vector<int64_t> idx(size_t(s.rows));
  if (s.pattern == "sorted" || s.pattern == "shuffled") {
    for (int64_t r = 0; r < s.rows; ++r) idx[size_t(r)] = r * s.gates / s.rows;
    // Every gate keeps its share of rows, in random row order: with rows/1
    // gates a permutation, so every gate row is read once, as the bytes count.
    if (s.pattern == "shuffled") std::shuffle(idx.begin(), idx.end(), std::mt19937_64(seed));
  } else {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int64_t> u(0, s.gates - 1);
    for (auto& v : idx) v = u(rng);
  }
  return idx;
}

// One rotated set of device buffers.
struct Set {
  void *res, *gate, *y, *out, *g, *grad_res, *grad_gate, *grad_y;
  int64_t* index;
};

struct Buffers {
  std::vector<Set> sets;
  std::vector<void*> owned;
  ~Buffers() {
    for (void* p : owned) cudaFree(p);
  }
  void* alloc(size_t bytes) {
    void* p = nullptr;
    cuda_ok(cudaMalloc(&p, std::max<size_t>(bytes, 256)), "cudaMalloc (bench buffers)");
    owned.push_back(p);
    return p;
  }
};

void make_sets(const Shape& s, int nsets, Buffers* b) {
  const size_t e = s.dtype == GATECHECK_F32 ? 4 : 2;
  const size_t nd = size_t(s.rows * s.dim) * e, gd = size_t(s.gates * s.dim) * e;
  for (int k = 0; k < nsets; ++k) {
    Set t;
    t.res = b->alloc(nd);
    t.gate = b->alloc(gd);
    t.y = b->alloc(nd);
    t.out = b->alloc(nd);
    t.g = b->alloc(nd);
    t.grad_res = b->alloc(nd);
    t.grad_gate = b->alloc(gd);
    t.grad_y = b->alloc(nd);
    t.index = static_cast<int64_t*>(b->alloc(size_t(s.rows) * 8));
    const uint64_t seed = 1000 * uint64_t(k) + 1;
    bench::fill_random(t.res, s.rows * s.dim, s.dtype, seed);
    bench::fill_random(t.gate, s.gates * s.dim, s.dtype, seed + 1);
    bench::fill_random(t.y, s.rows * s.dim, s.dtype, seed + 2);
    bench::fill_random(t.g, s.rows * s.dim, s.dtype, seed + 3);
    const auto idx = make_index(s, seed + 4);
    cuda_ok(cudaMemcpy(t.index, idx.data(), idx.size() * 8, cudaMemcpyHostToDevice), "upload index");
    b->sets.push_back(t);
  }
  cuda_ok(cudaDeviceSynchronize(), "fill");
}

void must(const Status& s) {
  if (!s.ok()) throw std::runtime_error(s.message);
}

const char* dtype_label(int d) { return d == GATECHECK_F32 ? "fp32" : d == GATECHECK_F16 ? "fp16" : "bf16"; }

}  // namespace

int run_kernel_bench(int argc_in, char** argv_in) {
  // --op picks the op's benchmark; rmsnorm_modulate's has options of its own.
  std::string op = "gate_residual";
  std::vector<char*> rest{argv_in[0]};
  for (int i = 1; i < argc_in; ++i) {
    const std::string a = argv_in[i];
    if (a == "--op" && i + 1 < argc_in) op = argv_in[++i];
    else if (a.rfind("--op=", 0) == 0) op = a.substr(5);
    else rest.push_back(argv_in[i]);
  }
  if (op == "rmsnorm_modulate") return run_rmsnorm_bench(int(rest.size()), rest.data());
  if (op != "gate_residual") {
    std::fprintf(stderr, "gatecheck-bench: --op %s: no kernel benchmark for that op (gate_residual, rmsnorm_modulate)\n",
                 op.c_str());
    return 2;
  }
  const int argc = int(rest.size());
  char** argv = rest.data();
  CLI::App app{"gatecheck-bench: gate_residual kernels vs torch eager vs the copy ceiling "
               "(--op rmsnorm_modulate: that op's, with its own options)"};
  std::string dtypes = "bf16,fp16", dims = "3072,5376", rows_list = "4097,32768,131072",
              gates_rules = "9,rows/1024,rows/3", patterns = "sorted,random", json_path, bwd_vecs = "0",
              bwd_variants;
  int reps = 60;
  bench::Warmup warmup;
  bool no_torch = false, stages = false, free_queue = false;
  app.add_option("--op", op, "gate_residual (this benchmark) or rmsnorm_modulate (give --op rmsnorm_modulate --help)");
  app.add_option("--dtypes", dtypes, "comma list of bf16, fp16, fp32");
  app.add_option("--dims", dims, "comma list");
  app.add_option("--rows", rows_list, "comma list");
  app.add_option("--gates", gates_rules, "comma list of numbers or rows/K");
  app.add_option("--patterns", patterns, "comma list of sorted, random, shuffled (sorted's rows per gate in random order)");
  app.add_option("--reps", reps, "timed runs per measurement (median; at least 50)");
  app.add_option("--warmup", warmup.runs, "untimed runs first, at least");
  app.add_option("--warmup-ms", warmup.min_ms, "and untimed runs until this many milliseconds have passed");
  app.add_option("--bwd-vec-bytes", bwd_vecs, "backward vector widths to compare (0 = automatic), comma list");
  app.add_option("--bwd-variants", bwd_variants,
                 "backward variants to compare, comma list of '+'-joined settings: auto, or GATECHECK_CUDA_TUNING "
                 "items of the backward (plan=1|2|3, tile=1|2|3|4, vec=, seg=, threads=, cols=, cluster=), or their "
                 "short names: cub, count or fused (index plan; fused: one kernel, no plan in memory), thread, "
                 "staged, piped or short (tile kernel), seg256 (the copy pipeline's 256-byte row segments), t512 and c1 "
                 "(the one-kernel backward with 512 threads a block, one column summed per thread), kxN (its blocks "
                 "in clusters of N column chunks), vN (vector bytes); replaces --bwd-vec-bytes");
  app.add_option("--json", json_path, "write the results here");
  app.add_flag("--no-torch", no_torch, "skip torch eager");
  app.add_flag("--free-queue", free_queue,
               "queue the timed runs as the GPU runs them, without the hold kernel (short calls are then timed "
               "at the host's launch rate)");
  app.add_flag("--stages", stages, "also time the backward's index plan alone, and everything without PDL");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (reps < 50) {
    std::fprintf(stderr, "gatecheck-bench: --reps %d: at least 50 runs are needed for a median\n", reps);
    return 2;
  }
  if (warmup.runs < 0 || !(warmup.min_ms >= 0 && warmup.min_ms <= 60000)) {
    std::fprintf(stderr, "gatecheck-bench: --warmup %d / --warmup-ms %g: runs must be >= 0 and milliseconds in [0, 60000]\n",
                 warmup.runs, warmup.min_ms);
    return 2;
  }
  std::string shape_error;
  if (!bench::check_shape_lists(dtypes, dims, rows_list, gates_rules, patterns, &shape_error)) {
    std::fprintf(stderr, "gatecheck-bench: %s\n", shape_error.c_str());
    return 2;
  }
  std::vector<bench::Variant> variants_list;
  std::string variant_error;
  if (!bench::parse_variants(bwd_variants, bwd_vecs, &variants_list, &variant_error)) {
    std::fprintf(stderr, "gatecheck-bench: %s\n", variant_error.c_str());
    return 2;
  }
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::fprintf(stderr, "gatecheck-bench: no CUDA device is available on this machine; the benchmark needs a GPU\n");
    return 3;
  }
  bool torch_on = false;
#if GATECHECK_BENCH_TORCH
  torch_on = !no_torch && bench::torch_eager_cuda_available();
#endif
  if (!torch_on && !no_torch)
    std::fprintf(stderr, "gatecheck-bench: LibTorch with CUDA is not available in this build: torch eager skipped\n");

  try {
    cudaDeviceProp prop{};
    cuda_ok(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    const double copy_bw = bench::copy_bandwidth(size_t(2) << 30, 20);
    std::printf("device %s, %d SMs, L2 %.0f MB; copy ceiling %.3f TB/s (read+write, 2 GiB D2D)\n", prop.name,
                prop.multiProcessorCount, prop.l2CacheSize / 1e6, copy_bw / 1e12);
    bench::set_timing_queue(free_queue ? bench::Queue::Free : bench::Queue::Held);
    const double empty1_us = bench::empty_kernel_us(1, warmup, reps);
    const double empty_full_us = bench::empty_kernel_us(8 * prop.multiProcessorCount, warmup, reps);
    const double empty_free_us = bench::empty_kernel_us(8 * prop.multiProcessorCount, warmup, reps, bench::Queue::Free);
    std::printf("timing: %s\n", free_queue ? "runs queued as the GPU runs them (--free-queue)"
                                           : "each batch of 10 runs queued behind a hold kernel, then let go (GPU time only)");
    std::printf("an empty kernel between two events: %.2f us (1 block), %.2f us (%d blocks of 256 threads); "
                "%.2f us queued as the GPU runs them (the host's launch rate)\n",
                empty1_us, empty_full_us, 8 * prop.multiProcessorCount, empty_free_us);
    nlohmann::json out = {{"device", prop.name}, {"sm_count", prop.multiProcessorCount},
                          {"l2_bytes", prop.l2CacheSize}, {"copy_TBps", copy_bw / 1e12},
                          {"timing", free_queue ? "free" : "held"},
                          {"empty_kernel_us", empty1_us}, {"empty_kernel_8_blocks_an_sm_us", empty_full_us},
                          {"empty_kernel_8_blocks_an_sm_free_queue_us", empty_free_us},
                          {"reps", reps}, {"warmup", warmup.runs}, {"warmup_ms", warmup.min_ms}, {"results", nlohmann::json::array()}};
    // A variant sets every backward knob (its own, or the default); the
    // environment's other knobs (no_pdl, the forward's vector width) stay.
    // (The whole struct is taken and those few put back, so that a new
    // backward knob cannot be dropped on the way, as one once was.)
    const CudaTuning from_env = gate_residual_cuda_tuning();
    auto apply = [from_env](const bench::Variant& v) {
      CudaTuning& t = gate_residual_cuda_tuning();
      t = v.tuning;
      t.no_pdl = from_env.no_pdl;
      t.fwd_vector_bytes = from_env.fwd_vector_bytes;
      t.fwd_rows = from_env.fwd_rows;
      t.stop_after_plan = from_env.stop_after_plan;
      t.device_wide_plan = from_env.device_wide_plan;
    };

    std::printf("\n%-4s %5s %7s %6s %-6s | %8s %5s | %8s %5s | %9s %9s | %6s %6s | %s\n", "type", "dim", "rows",
                "gates", "index", "fwd_us", "fwd%", "fb_us", "fb%", "eagF_us", "eagFB_us", "xF", "xFB", "checks");
    for (const auto& dn : bench::split_commas(dtypes))
      for (const auto& ds : bench::split_commas(dims))
        for (const auto& rs : bench::split_commas(rows_list))
          for (const auto& gr : bench::split_commas(gates_rules))
            for (const auto& pat : bench::split_commas(patterns)) {
              Shape s;
              s.dtype = bench::dtype_of(dn);  // known: check_shape_lists passed
              s.dim = std::stoll(ds);
              s.rows = std::stoll(rs);
              s.gates_rule = gr;
              s.gates = gates_for(gr, s.rows);
              s.pattern = pat;
              const double e = s.dtype == GATECHECK_F32 ? 4 : 2;
              const double nd = double(s.rows) * double(s.dim), gd = double(s.gates) * double(s.dim);
              const double fwd_bytes = e * (3 * nd + gd) + 8.0 * double(s.rows);
              const double bwd_bytes = e * (4 * nd + 2 * gd) + 8.0 * double(s.rows);
              const double set_bytes = e * (7 * nd + 2 * gd);
              const int nsets = int(std::min<double>(8, std::max<double>(2, 4.0 * prop.l2CacheSize / set_bytes + 1)));
              Buffers buf;
              make_sets(s, nsets, &buf);
              const gatecheck_problem p{s.rows, s.dim, s.gates, s.dtype, GATECHECK_CUDA, nullptr};
              auto fwd = [&](int i) {
                const Set& t = buf.sets[size_t(i) % buf.sets.size()];
                must(gate_residual_fwd_cuda(p, t.res, t.gate, t.index, t.y, t.out));
              };
              auto fwd_bwd = [&](int i) {
                const Set& t = buf.sets[size_t(i) % buf.sets.size()];
                must(gate_residual_fwd_cuda(p, t.res, t.gate, t.index, t.y, t.out));
                must(gate_residual_bwd_cuda(p, t.g, t.gate, t.index, t.y, t.grad_res, t.grad_gate, t.grad_y));
              };
              nlohmann::json row = {{"dtype", dtype_label(s.dtype)}, {"rows", s.rows}, {"dim", s.dim},
                                    {"gates", s.gates}, {"gates_rule", s.gates_rule}, {"index", s.pattern},
                                    {"sets", nsets}, {"fwd_bytes", fwd_bytes}, {"fwd_bwd_bytes", fwd_bytes + bwd_bytes}};
              const int timeouts_before = bench::hold_timeouts();
              const double fwd_us = bench::median_us(fwd, warmup, reps);
              double fb_us = 0;
              nlohmann::json variants = nlohmann::json::object();
              auto bwd = [&](int i) {
                const Set& t = buf.sets[size_t(i) % buf.sets.size()];
                must(gate_residual_bwd_cuda(p, t.g, t.gate, t.index, t.y, t.grad_res, t.grad_gate, t.grad_y));
              };
              // The backward alone, and its index plan alone (the call stops after the plan).
              auto bwd_and_plan_us = [&]() {
                const double b_us = bench::median_us(bwd, warmup, reps);
                gate_residual_cuda_tuning().stop_after_plan = true;
                const double plan_us = bench::median_us(bwd, warmup, reps);
                gate_residual_cuda_tuning().stop_after_plan = false;
                return std::make_pair(b_us, plan_us);
              };
              nlohmann::json variant_stages = nlohmann::json::object();
              for (const bench::Variant& v : variants_list) {
                apply(v);
                const double t = bench::median_us(fwd_bwd, warmup, reps);
                variants[v.label] = t;
                if (&v == &variants_list.front()) fb_us = t;
                if (stages && variants_list.size() > 1) {
                  const auto [b_us, plan_us] = bwd_and_plan_us();
                  variant_stages[v.label] = {{"fwd_bwd_us", t}, {"bwd_us", b_us}, {"bwd_plan_only_us", plan_us}};
                }
              }
              apply(variants_list.front());
              if (!variant_stages.empty()) row["stages_by_variant"] = variant_stages;
              const double copy_same_us = bench::copy_time_us(size_t(fwd_bytes / 2), warmup, reps);
              const double copy_same_fb_us = bench::copy_time_us(size_t((fwd_bytes + bwd_bytes) / 2), warmup, reps);
              row.update({{"copy_same_bytes_as_fwd_us", copy_same_us}, {"copy_same_bytes_as_fwd_bwd_us", copy_same_fb_us}});
              // An estimate of the best a timed call can do: the fixed cost of a launch
              // between two events, plus the bytes at the copy ceiling (a kernel can
              // beat that rate a little: 102% on the largest shapes).
              const double fwd_floor_us = empty_full_us + fwd_bytes / copy_bw * 1e6;
              const double fb_floor_us = empty_full_us + (fwd_bytes + bwd_bytes) / copy_bw * 1e6;
              row.update({{"fwd_floor_us", fwd_floor_us}, {"fwd_bwd_floor_us", fb_floor_us}});
              if (stages) {
                const auto [bwd_us, plan_us] = bwd_and_plan_us();
                gate_residual_cuda_tuning().no_pdl = true;
                const double fwd_nopdl = bench::median_us(fwd, warmup, reps);
                const double fb_nopdl = bench::median_us(fwd_bwd, warmup, reps);
                gate_residual_cuda_tuning().no_pdl = false;
                row.update({{"bwd_us", bwd_us}, {"bwd_plan_only_us", plan_us}, {"fwd_us_without_pdl", fwd_nopdl},
                            {"fwd_bwd_us_without_pdl", fb_nopdl}});
                std::printf("      stages: bwd %.1f us, of which index plan alone %.1f us; without PDL fwd %.1f us, fwd+bwd %.1f us\n",
                            bwd_us, plan_us, fwd_nopdl, fb_nopdl);
              }
              if (stages) {  // a measuring build only: where the one-kernel backward's cycles go
                double ph[kPipePhaseCount];
                unsigned long long warps = 0;
                if (gate_residual_cuda_pipe_phases(ph, &warps)) {  // clears what the timing added
                  for (int i = 0; i < 20; ++i) bwd(i);
                  if (gate_residual_cuda_pipe_phases(ph, &warps) && warps > 0) {
                    nlohmann::json j = nlohmann::json::object();
                    std::printf("      one-kernel backward, mean SM cycles per warp (%llu warps in 20 calls):",
                                (unsigned long long)warps);
                    for (int k = 0; k < kPipePhaseCount; ++k) {
                      j[kPipePhaseNames[k]] = ph[k];
                      std::printf(" %s %.0f", kPipePhaseNames[k], ph[k]);
                    }
                    std::printf("\n");
                    row["pipe_phase_cycles_per_warp"] = j;
                  }
                }
              }
              // Checks on set 0: the index status, and grad_gate repeatable bit for bit.
              const Set& t0 = buf.sets[0];
              fwd_bwd(0);
              must(gate_residual_cuda_sync_status("bench", p, t0.index));
              const size_t gbytes = size_t(gd * e);
              std::vector<uint8_t> g1(gbytes), g2(gbytes);
              cuda_ok(cudaMemcpy(g1.data(), t0.grad_gate, gbytes, cudaMemcpyDeviceToHost), "download");
              fwd_bwd(0);
              cuda_ok(cudaMemcpy(g2.data(), t0.grad_gate, gbytes, cudaMemcpyDeviceToHost), "download");
              const bool repeatable = g1 == g2;
              const double fwd_frac = fwd_bytes / (fwd_us * 1e-6) / copy_bw;
              const double fb_frac = (fwd_bytes + bwd_bytes) / (fb_us * 1e-6) / copy_bw;
              row.update({{"fwd_us", fwd_us}, {"fwd_bwd_us", fb_us}, {"fwd_frac_of_copy", fwd_frac},
                          {"fwd_bwd_frac_of_copy", fb_frac}, {"fwd_bwd_us_by_variant", variants},
                          {"grad_gate_repeatable", repeatable}});
              std::string checks = repeatable ? "rep" : "NOT-REPEATABLE";
              double eag_f = 0, eag_fb = 0;
#if GATECHECK_BENCH_TORCH
              if (torch_on) {
                std::vector<bench::EagerSet> es;
                for (const Set& t : buf.sets) es.push_back({t.res, t.gate, t.index, t.y, t.g});
                const bench::EagerResult er = bench::time_torch_eager(
                    s.dtype, s.rows, s.dim, s.gates, es, warmup, reps, t0.out, t0.grad_y, t0.grad_gate);
                if (er.ok) {
                  eag_f = er.fwd_us;
                  eag_fb = er.fwd_bwd_us;
                  row.update({{"eager_fwd_us", eag_f}, {"eager_fwd_bwd_us", eag_fb},
                              {"speedup_fwd", eag_f / fwd_us}, {"speedup_fwd_bwd", eag_fb / fb_us},
                              {"out_bitwise_eq_eager", er.out_equal}, {"grad_y_bitwise_eq_eager", er.grad_y_equal},
                              {"eager_grad_gate_max_rel_diff", er.grad_gate_max_rel}});
                  checks += er.out_equal && er.grad_y_equal ? " eq" : " NOT-EQ-EAGER";
                } else {
                  row["eager_error"] = er.error;
                  checks += std::string(" eager-error: ") + er.error;
                }
                bench::torch_release_cache();
              }
#endif
              // A held batch let go by the timeout: some timed call waited on the host.
              if (const int n = bench::hold_timeouts() - timeouts_before) {
                row["hold_timeouts"] = n;
                checks += " HOLD-TIMED-OUT(" + std::to_string(n) + ")";
              }
              out["results"].push_back(row);
              std::printf("%-4s %5lld %7lld %6lld %-6s | %8.1f %4.0f%% | %8.1f %4.0f%% | %9.1f %9.1f | %6.2f %6.2f | %s\n",
                          dtype_label(s.dtype), (long long)s.dim, (long long)s.rows, (long long)s.gates,
                          s.pattern.c_str(), fwd_us, 100 * fwd_frac, fb_us, 100 * fb_frac, eag_f, eag_fb,
                          eag_f > 0 ? eag_f / fwd_us : 0.0, eag_fb > 0 ? eag_fb / fb_us : 0.0, checks.c_str());
              std::printf("      a copy of the same bytes takes %.1f us (fwd's: %.0f%% of copy ceiling), %.1f us (fwd+bwd's: %.0f%%)\n",
                          copy_same_us, 100 * fwd_bytes / (copy_same_us * 1e-6) / copy_bw, copy_same_fb_us,
                          100 * (fwd_bytes + bwd_bytes) / (copy_same_fb_us * 1e-6) / copy_bw);
              std::printf("      an empty kernel plus these bytes at the copy ceiling: fwd %.1f us (%.0f%% of it), fwd+bwd %.1f us (%.0f%%)\n",
                          fwd_floor_us, 100 * fwd_bytes / (fwd_floor_us * 1e-6) / copy_bw, fb_floor_us,
                          100 * (fwd_bytes + bwd_bytes) / (fb_floor_us * 1e-6) / copy_bw);
              if (variants.size() > 1) {
                std::printf("      backward variants:");
                for (auto& [k, v] : variants.items()) std::printf(" %s -> %.1f us", k.c_str(), v.get<double>());
                std::printf("\n");
              }
              std::fflush(stdout);
            }
    out["hold_timeouts"] = bench::hold_timeouts();
    if (bench::hold_timeouts() > 0)
      std::printf("\n%d held batches were let go by the timeout, not the host: those calls waited on the host\n",
                  bench::hold_timeouts());
    if (!json_path.empty()) {
      std::ofstream f(json_path);
      f << out.dump(1) << "\n";
      std::printf("\nwrote %s\n", json_path.c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gatecheck-bench: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace gatecheck
