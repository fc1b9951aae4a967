// gatecheck-rmsnorm-bench: rmsnorm_modulate's CUDA kernels timed beside a
// copy of the same bytes (bench_device.h's copy_time_us: a pool past 4x L2).
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
#include <cstdio>
#include <stdexcept>
#include <random>
#include <string>
#include <vector>

#include "../kernels/cuda/rmsnorm_modulate_cuda.h"
#include "../kernels/rmsnorm_modulate.h"
#include "bench_device.h"
#include "bench_options.h"

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

// The backward's kernels other than the default, timed beside it.
constexpr RmsBwdKernels kOther =
    kRmsBwdKernelsDefault == RmsBwdKernels::two_pass ? RmsBwdKernels::one_pass : RmsBwdKernels::two_pass;

int run(int argc, char** argv) {
  CLI::App app{"rmsnorm_modulate's CUDA kernels beside a copy of the same bytes"};
  std::string rows_s = "32768", dims_s = "5376", gates_s = "9", dtypes_s = "bf16";
  int reps = 50;
  app.add_option("--rows", rows_s, "comma list of row counts");
  app.add_option("--dims", dims_s, "comma list of dims");
  app.add_option("--gates", gates_s, "comma list of gate counts, or 'rows' for one gate per row");
  app.add_option("--dtypes", dtypes_s, "comma list of bf16, f16, f32");
  app.add_option("--reps", reps, "timed runs per figure (median)")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "gatecheck-rmsnorm-bench: no CUDA device\n");
    return 3;
  }
  const bench::Warmup warmup;
  std::printf("| dtype | rows | dim | gates | fwd us | copy us | fwd/copy | fwd+bwd us | copy us | (fwd+bwd)/copy | "
              "fwd+bwd %s us | bwd scratch MiB |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n",
              kOther == RmsBwdKernels::one_pass ? "one-pass" : "two-pass");
  for (const auto& dt : bench::split_commas(dtypes_s))
    for (const auto& rs : bench::split_commas(rows_s))
      for (const auto& ds : bench::split_commas(dims_s))
        for (const auto& gs : bench::split_commas(gates_s)) {
          const int dtype = bench::dtype_of(dt);
          if (dtype < 0) {
            std::fprintf(stderr, "gatecheck-rmsnorm-bench: --dtypes: unknown dtype '%s'\n", dt.c_str());
            return 2;
          }
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
          rmsnorm_modulate_cuda_set_bwd_kernels(kOther);
          const double other_us = bench::median_us([&](int) { call(fwd); call(bwd); }, warmup, reps);
          rmsnorm_modulate_cuda_set_bwd_kernels(kRmsBwdKernelsDefault);
          const double fb = double(s) * double(2 * rows * dim + dim + 2 * gates * dim) + 8.0 * rows;
          const double bb = double(s) * double(3 * rows * dim + 2 * dim + 3 * gates * dim) + 8.0 * rows;
          const double copy_f = bench::copy_time_us(size_t(fb / 2), warmup, reps);
          const double copy_fb = bench::copy_time_us(size_t((fb + bb) / 2), warmup, reps);
          std::printf("| %s | %lld | %lld | %lld | %.1f | %.1f | %.0f%% | %.1f | %.1f | %.0f%% | %.1f | %.1f |\n",
                      dt.c_str(), (long long)rows, (long long)dim, (long long)gates, fwd_us, copy_f,
                      100.0 * copy_f / fwd_us, both_us, copy_fb, 100.0 * copy_fb / both_us, other_us,
                      double(rmsnorm_modulate_cuda_bwd_scratch_bytes(rows, dim, gates)) / (1 << 20));
          std::fflush(stdout);
        }
  return 0;
}

}  // namespace
}  // namespace gatecheck

int main(int argc, char** argv) {
  try {
    return gatecheck::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gatecheck-rmsnorm-bench: %s\n", e.what());
    return 1;
  }
}
