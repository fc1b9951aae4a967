// torch eager (LibTorch on CUDA) on the benchmark's own device buffers:
// res + gate.index_select(0, index) * y, with autograd for the backward.
// Built only when LibTorch has CUDA; no LibTorch types cross this header.
#pragma once

#include <cstdint>
#include <vector>

#include "bench_warmup.h"

namespace gatecheck {
namespace bench {

struct EagerSet {
  void* res;
  void* gate;
  const int64_t* index;
  void* y;
  void* grad_out;
};

struct EagerResult {
  bool ok = false;
  char error[256] = {0};
  double fwd_us = 0, fwd_bwd_us = 0;
  // Bitwise comparisons on set 0 against our outputs.
  bool out_equal = false, grad_y_equal = false;
  double grad_gate_max_rel = 0;  // eager accumulates in the dtype: not bitwise
};

bool torch_eager_cuda_available();

// dtype: 0 f32, 1 f16, 2 bf16. ours_*: our outputs for set 0 (device pointers).
EagerResult time_torch_eager(int dtype, int64_t rows, int64_t dim, int64_t gates,
                             const std::vector<EagerSet>& sets, const Warmup& warmup, int reps,
                             const void* ours_out, const void* ours_grad_y, const void* ours_grad_gate);

// rmsnorm_modulate in torch eager, diffusers' composition on the benchmark's
// own buffers (dtype as above): n = (x.float() * rsqrt(mean(x.float()^2) +
// eps)).to(dtype) * w, out = n * (1 + scale[index]) + shift[index]; the
// backward is autograd's for x, w, shift and scale.
struct RmsEagerSet {
  void *x, *w, *shift, *scale, *grad_out;
  const int64_t* index;
};
struct RmsEagerResult {
  bool ok = false;
  char error[256] = {0};
  double fwd_us = 0, fwd_bwd_us = 0;
};
RmsEagerResult time_torch_eager_rmsnorm(int dtype, int64_t rows, int64_t dim, int64_t gates, const RmsEagerSet& set,
                                        const Warmup& warmup, int reps);

// Returns LibTorch's cached device memory to the driver between shapes.
void torch_release_cache();

}  // namespace bench
}  // namespace gatecheck
