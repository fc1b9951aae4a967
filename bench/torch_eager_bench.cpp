#include "torch_eager_bench.h"

#include <c10/cuda/CUDACachingAllocator.h>
#include <torch/torch.h>

#include <cstdio>
#include <exception>

#include "bench_device.h"

namespace gatecheck {
namespace bench {

namespace {
torch::Dtype torch_dtype(int d) {
  return d == 0 ? torch::kFloat : d == 1 ? torch::kHalf : torch::kBFloat16;
}
torch::Tensor bits_view(const torch::Tensor& t) {
  return t.scalar_type() == torch::kFloat ? t.view(torch::kInt) : t.view(torch::kShort);
}
}  // namespace

bool torch_eager_cuda_available() { return torch::cuda::is_available(); }

void torch_release_cache() { c10::cuda::CUDACachingAllocator::emptyCache(); }

EagerResult time_torch_eager(int dtype, int64_t rows, int64_t dim, int64_t gates,
                             const std::vector<EagerSet>& sets, const Warmup& warmup, int reps,
                             const void* ours_out, const void* ours_grad_y, const void* ours_grad_gate) {
  EagerResult r;
  try {
    const auto opt = torch::TensorOptions().dtype(torch_dtype(dtype)).device(torch::kCUDA);
    const auto iopt = torch::TensorOptions().dtype(torch::kLong).device(torch::kCUDA);
    struct T { torch::Tensor res, gate, index, y, go; };
    std::vector<T> ts;
    for (const EagerSet& s : sets) {
      ts.push_back({torch::from_blob(s.res, {rows, dim}, opt).requires_grad_(true),
                    torch::from_blob(s.gate, {gates, dim}, opt).requires_grad_(true),
                    torch::from_blob(const_cast<int64_t*>(s.index), {rows}, iopt),
                    torch::from_blob(s.y, {rows, dim}, opt).requires_grad_(true),
                    torch::from_blob(s.grad_out, {rows, dim}, opt)});
    }
    auto eager = [](const T& t) { return t.res + t.gate.index_select(0, t.index) * t.y; };
    const size_t n = ts.size();
    r.fwd_us = median_us([&](int i) {
      torch::NoGradGuard no_grad;
      eager(ts[size_t(i) % n]);
    }, warmup, reps);
    r.fwd_bwd_us = median_us([&](int i) {
      const T& t = ts[size_t(i) % n];
      torch::autograd::grad({eager(t)}, {t.res, t.gate, t.y}, {t.go});
    }, warmup, reps);
    const T& t = ts[0];
    const torch::Tensor out = eager(t);
    const auto g = torch::autograd::grad({out}, {t.res, t.gate, t.y}, {t.go});
    const torch::Tensor our_out = torch::from_blob(const_cast<void*>(ours_out), {rows, dim}, opt);
    const torch::Tensor our_gy = torch::from_blob(const_cast<void*>(ours_grad_y), {rows, dim}, opt);
    const torch::Tensor our_gg = torch::from_blob(const_cast<void*>(ours_grad_gate), {gates, dim}, opt);
    r.out_equal = torch::equal(bits_view(out.detach()), bits_view(our_out));
    r.grad_y_equal = torch::equal(bits_view(g[2]), bits_view(our_gy));
    const torch::Tensor ref = g[1].to(torch::kDouble), ours = our_gg.to(torch::kDouble);
    const double scale = ours.abs().max().item<double>();
    r.grad_gate_max_rel = scale > 0 ? (ref - ours).abs().max().item<double>() / scale : 0.0;
    r.ok = true;
  } catch (const std::exception& e) {
    std::snprintf(r.error, sizeof r.error, "%s", e.what());
  }
  return r;
}

RmsEagerResult time_torch_eager_rmsnorm(int dtype, int64_t rows, int64_t dim, int64_t gates, const RmsEagerSet& s,
                                        const Warmup& warmup, int reps) {
  RmsEagerResult r;
  try {
    const auto opt = torch::TensorOptions().dtype(torch_dtype(dtype)).device(torch::kCUDA);
    const torch::Tensor x = torch::from_blob(s.x, {rows, dim}, opt).requires_grad_(true);
    const torch::Tensor w = torch::from_blob(s.w, {dim}, opt).requires_grad_(true);
    const torch::Tensor shift = torch::from_blob(s.shift, {gates, dim}, opt).requires_grad_(true);
    const torch::Tensor scale = torch::from_blob(s.scale, {gates, dim}, opt).requires_grad_(true);
    const torch::Tensor g = torch::from_blob(s.grad_out, {rows, dim}, opt);
    const torch::Tensor index = torch::from_blob(const_cast<int64_t*>(s.index), {rows}, opt.dtype(torch::kLong));
    auto eager = [&] {
      const torch::Tensor xf = x.to(torch::kFloat);
      const torch::Tensor n = (xf * torch::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + 1e-6)).to(x.scalar_type()) * w;
      return n * (1 + scale.index_select(0, index)) + shift.index_select(0, index);
    };
    r.fwd_us = median_us([&](int) {
      torch::NoGradGuard no_grad;
      eager();
    }, warmup, reps);
    r.fwd_bwd_us = median_us([&](int) { torch::autograd::grad({eager()}, {x, w, shift, scale}, {g}); }, warmup, reps);
    r.ok = true;
  } catch (const std::exception& e) {
    std::snprintf(r.error, sizeof r.error, "%s", e.what());
  }
  return r;
}

}  // namespace bench
}  // namespace gatecheck
