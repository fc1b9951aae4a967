// rmsnorm_modulate's CUDA kernels timed beside a copy of the same bytes
// (bench_device.h's copy_time_us: a pool past 4x L2) and torch eager (LibTorch
// on CUDA, where it has CUDA), all in one run: rmsnorm_bench.h.
// Bytes are counted as each input read once and each output written once:
//   forward   s*(2*rows*dim + dim + 2*gates*dim) + 8*rows
//   backward  s*(3*rows*dim + 2*dim + 3*gates*dim) + 8*rows
// Shapes: --rows, --dims, --gates (a number, or "rows": one gate per row),
// --dtypes, each a comma list; every combination is timed. The backward is
// timed with its default kernels and with the other ones (one pass or two
// passes: rmsnorm_modulate_cuda.h), beside each other.
#include <CLI/CLI.hpp>
#include <cuda_runtime.h>

#include <algorithm>
#include <iterator>
#include <cstdio>
#include <stdexcept>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "../kernels/cuda/rmsnorm_modulate_cuda.h"
#include "../kernels/rmsnorm_modulate.h"
#include "bench_device.h"
#include "bench_options.h"
#include "rmsnorm_bench.h"
#if GATECHECK_BENCH_TORCH
#include "torch_eager_bench.h"
#endif

namespace gatecheck {
namespace {

using bench::cuda_ok;

struct Buffers {
  std::vector<void*> all;
  void* make(size_t bytes) {
    void* p = nullptr;
    cuda_ok(cudaMalloc(&p, bytes ? bytes : 1), "cudaMalloc");
    all.push_back(p);
    return p;
  }
  ~Buffers() {
    for (void* p : all) cudaFree(p);
  }
};

// The backward's other kernels, timed beside the default (automatic): the
// two passes everywhere, and the one pass with its column sums in registers
// (the default's before they moved to shared memory where two blocks fit).
struct OtherKernels {
  RmsBwdKernels kernels;
  const char* column;
};
constexpr OtherKernels kOthers[] = {{RmsBwdKernels::two_pass, "fwd+bwd two-pass us"},
                                    {RmsBwdKernels::one_pass_register_sums, "fwd+bwd one-pass register sums us"}};

int run(int argc, char** argv) {
  CLI::App app{"rmsnorm_modulate's CUDA kernels beside a copy of the same bytes and torch eager"};
  std::string rows_s = "32768", dims_s = "5376", gates_s = "9", dtypes_s = "bf16";
  int reps = 50, eager_reps = 10;
  bool no_torch = false;
  app.add_option("--rows", rows_s, "comma list of row counts");
  app.add_option("--dims", dims_s, "comma list of dims");
  app.add_option("--gates", gates_s, "comma list of gate counts, or 'rows' for one gate per row");
  app.add_option("--dtypes", dtypes_s, "comma list of bf16, f16, f32");
  app.add_option("--reps", reps, "timed runs per figure (median)")->check(CLI::PositiveNumber);
  app.add_option("--eager-reps", eager_reps, "timed runs per torch eager figure (median)")->check(CLI::PositiveNumber);
  app.add_flag("--no-torch", no_torch, "leave torch eager out");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  auto positive = [](const std::string& v) {
    return !v.empty() && v.size() <= 12 && v.find_first_not_of("0123456789") == std::string::npos && std::stoll(v) > 0;
  };
  for (const auto& [option, list, rows_ok] : {std::tuple<const char*, const std::string&, bool>{"--rows", rows_s, false},
                                              {"--dims", dims_s, false}, {"--gates", gates_s, true}}) {
    const std::vector<std::string> items = bench::split_commas(list);
    if (items.empty()) {
      std::fprintf(stderr, "rmsnorm_modulate benchmark: %s '%s': no item\n", option, list.c_str());
      return 2;
    }
    for (const auto& item : items)
      if (!positive(item) && !(rows_ok && item == "rows")) {
        std::fprintf(stderr, "rmsnorm_modulate benchmark: %s: '%s' is not a positive number%s\n", option, item.c_str(),
                     rows_ok ? " or 'rows'" : "");
        return 2;
      }
  }
  for (const auto& dt : bench::split_commas(dtypes_s))
    if (bench::dtype_of(dt) < 0) {
      std::fprintf(stderr, "rmsnorm_modulate benchmark: --dtypes: unknown dtype '%s' (bf16, f16, f32)\n", dt.c_str());
      return 2;
    }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "rmsnorm_modulate benchmark: no CUDA device is available on this machine; the benchmark needs a GPU\n");
    return 3;
  }
  const bench::Warmup warmup;
  bool torch_on = false;
#if GATECHECK_BENCH_TORCH
  torch_on = !no_torch && bench::torch_eager_cuda_available();
#endif
  if (!torch_on && !no_torch)
    std::fprintf(stderr, "rmsnorm_modulate benchmark: torch eager left out (this build's LibTorch has no CUDA)\n");
  std::printf("| dtype | rows | dim | gates | fwd us | copy us | fwd/copy | fwd+bwd us | copy us | (fwd+bwd)/copy | ");
  for (const OtherKernels& o : kOthers) std::printf("%s | ", o.column);
  std::printf("bwd scratch MiB | eager fwd us | eager fwd+bwd us |\n|---|---|---|---|---|---|---|---|---|---|");
  for (size_t i = 0; i < std::size(kOthers); ++i) std::printf("---|");
  std::printf("---|---|---|\n");
  for (const auto& dt : bench::split_commas(dtypes_s))
    for (const auto& rs : bench::split_commas(rows_s))
      for (const auto& ds : bench::split_commas(dims_s))
        for (const auto& gs : bench::split_commas(gates_s)) {
          const int dtype = bench::dtype_of(dt);  // checked above
          const int64_t rows = std::stoll(rs), dim = std::stoll(ds), gates = gs == "rows" ? rows : std::stoll(gs);
          const size_t s = dtype == 0 ? 4 : 2;
          const OpSchema& op = rmsnorm_modulate_schema();
          gatecheck_problem p{};
          p.rows = rows;
          p.dim = dim;
          p.gates = gates;
          p.dtype = dtype;
          p.device = GATECHECK_CUDA;
          Buffers b;
          OpCall fwd = OpCall::shaped(op, Pass::forward, p), bwd = OpCall::shaped(op, Pass::backward, p);
          for (size_t i = 0; i < op.inputs.size(); ++i) {
            const bool ix = op.inputs[i].role == Role::index;
            const int64_t n = fwd.inputs[i].rows * fwd.inputs[i].cols;
            void* d = b.make(size_t(n) * (ix ? 8 : s));
            if (ix) {
              std::vector<int64_t> idx(static_cast<size_t>(rows));
              std::mt19937_64 rng(34);
              for (int64_t r = 0; r < rows; ++r) idx[size_t(r)] = gates == rows ? r : int64_t(rng() % uint64_t(gates));
              if (gates == rows) std::shuffle(idx.begin(), idx.end(), rng);
              cuda_ok(cudaMemcpy(d, idx.data(), idx.size() * 8, cudaMemcpyHostToDevice), "index upload");
            } else {
              bench::fill_random(d, n, dtype, 34 + i);
            }
            fwd.inputs[i].data = bwd.inputs[i].data = d;
          }
          for (size_t i = 0; i < op.outputs.size(); ++i)
            fwd.outputs[i].data = bwd.outputs[i].data =
                b.make(size_t(fwd.outputs[i].rows * fwd.outputs[i].cols) * s);
          auto* bad = static_cast<unsigned long long*>(b.make(8));
          auto call = [&](const OpCall& c) {
            const Status st = rmsnorm_modulate_cuda_run(c, bad);
            if (!st.ok()) throw std::runtime_error(st.message);
          };
          call(fwd);
          call(bwd);
          unsigned long long bad_row = 0;
          cuda_ok(cudaMemcpy(&bad_row, bad, 8, cudaMemcpyDeviceToHost), "status");
          if (bad_row != ~0ull) throw std::runtime_error("the kernels report a bad index in the benchmark's own");
          const double fwd_us = bench::median_us([&](int) { call(fwd); }, warmup, reps);
          const double both_us = bench::median_us([&](int) { call(fwd); call(bwd); }, warmup, reps);
          std::string others;
          for (const OtherKernels& o : kOthers) {
            rmsnorm_modulate_cuda_set_bwd_kernels(o.kernels);
            char cell[32];
            std::snprintf(cell, sizeof cell, " %.1f |", bench::median_us([&](int) { call(fwd); call(bwd); }, warmup, reps));
            others += cell;
          }
          rmsnorm_modulate_cuda_set_bwd_kernels(kRmsBwdKernelsDefault);
          const double fb = double(s) * double(2 * rows * dim + dim + 2 * gates * dim) + 8.0 * rows;
          const double bb = double(s) * double(3 * rows * dim + 2 * dim + 3 * gates * dim) + 8.0 * rows;
          const double copy_f = bench::copy_time_us(size_t(fb / 2), warmup, reps);
          const double copy_fb = bench::copy_time_us(size_t((fb + bb) / 2), warmup, reps);
          std::string eager = "| - | - |";  // torch eager: diffusers' composition, autograd for the backward
#if GATECHECK_BENCH_TORCH
          if (torch_on) {
            auto in = [&](const char* n) { return fwd.input(n).data; };
            const bench::RmsEagerResult e = bench::time_torch_eager_rmsnorm(
                dtype, rows, dim, gates, {in("x"), in("w"), in("shift"), in("scale"), in("grad_out"),
                                          static_cast<const int64_t*>(in("index"))}, warmup, eager_reps);
            char cell[96];
            std::snprintf(cell, sizeof cell, "| %.1f | %.1f |", e.fwd_us, e.fwd_bwd_us);
            eager = e.ok ? std::string(cell) : std::string("| failed: ") + e.error + " | - |";
            bench::torch_release_cache();
          }
#endif
          std::printf("| %s | %lld | %lld | %lld | %.1f | %.1f | %.0f%% | %.1f | %.1f | %.0f%% |%s %.1f %s\n",
                      dt.c_str(), (long long)rows, (long long)dim, (long long)gates, fwd_us, copy_f,
                      100.0 * copy_f / fwd_us, both_us, copy_fb, 100.0 * copy_fb / both_us, others.c_str(),
                      double(rmsnorm_modulate_cuda_bwd_scratch_bytes(rows, dim, gates)) / (1 << 20), eager.c_str());
          std::fflush(stdout);
        }
  return 0;
}

}  // namespace

int run_rmsnorm_bench(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rmsnorm_modulate benchmark: %s\n", e.what());
    return 1;
  }
}

}  // namespace gatecheck
