// torch-eager for rmsnorm_modulate: the eager composition, tensor op by
// tensor op, on leaves wrapped around the caller's buffers:
//   xf   = x.float();  rstd = rsqrt(xf.pow(2).mean(-1) + eps)       (fp32)
//   n    = (xf * rstd * w).to(dtype)            (as F.rms_norm: fp32, one rounding)
//   out  = n * (1 + scale[index]) + shift[index]   (three ops, each rounded to the dtype)
// The gather is index_select, so dshift and dscale come from its backward:
// index_add_ into a zeroed table *in the dtype* (each row's term rounded into
// the running sum for bf16/f16; atomics on CUDA). dx and dweight are
// autograd's through the fp32 statistics. The numerics are LibTorch's own,
// which is the point: this is the baseline a fused kernel is compared with.
//
// Also the library op of its plain part (torch_plain_op.h): at::rms_norm,
// what nn.RMSNorm and F.rms_norm run, here so that it costs no translation
// unit of its own. It exists from PyTorch 2.4 on; an older LibTorch compiles
// without it and says so.
#include "rmsnorm_modulate_torch_eager.h"

#include <torch/version.h>

#include <cstring>
#include <string>
#include <utility>

#include "../op_call_abi.h"
#include "../rmsnorm_modulate.h"
#include "torch_plain_op.h"
#include "torch_support.h"

namespace gatecheck {

namespace {

using namespace torch_support;

thread_local std::string g_error;

int report(const Status& s) {
  if (s.ok()) return 0;
  g_error = s.message;
  return int(s.kind);
}

struct Tensors {
  const OpCall& c;
  torch::TensorOptions opt, idx_opt;
  torch::Tensor idx;
  const TensorBuf& in(const char* n) const { return c.input(n); }
  void* out(const char* n) const { return c.output(n).data; }
  torch::Tensor rows_view(const char* n) const { return wrap(in(n).data, {c.p.rows, c.p.dim}, opt); }
  torch::Tensor table_view(const char* n) const { return wrap(in(n).data, {c.p.gates, c.p.dim}, opt); }
  torch::Tensor column_view(const char* n) const { return wrap(in(n).data, {c.p.dim}, opt); }
};

// The buffers as tensors; on cuda, after the caller's inputs are ready, the
// index is checked on a host copy: an out-of-range index_select there is a
// device-side assert that would poison the CUDA context for the process.
Status prepare(const OpCall& c, Tensors* t) {
  t->opt = options(c.p, scalar_type(c.p.dtype));
  t->idx_opt = options(c.p, torch::kLong);
  t->idx = torch::from_blob(const_cast<int64_t*>(c.index()), {c.p.rows}, t->idx_opt);
  if (c.p.device != GATECHECK_CUDA) return Status::success();
  torch::cuda::synchronize();
  const torch::Tensor host = t->idx.to(torch::kCPU).contiguous();
  const std::string who = c.pass == Pass::forward ? c.op->fwd_name() : c.op->bwd_name();
  return check_index_range(who.c_str(), c.p, host.data_ptr<int64_t>());
}

// diffusers' RMSNorm with its weight, as F.rms_norm computes it.
torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& w, double eps) {
  const torch::Tensor xf = x.to(torch::kFloat);
  const torch::Tensor rstd = torch::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + eps);
  return (xf * rstd * w).to(x.scalar_type());
}

torch::Tensor modulate(const torch::Tensor& n, const torch::Tensor& shift, const torch::Tensor& scale,
                       const torch::Tensor& idx) {
  return n * (1 + scale.index_select(0, idx)) + shift.index_select(0, idx);
}

Status forward(const OpCall& c, double eps) {
  Tensors t{c, {}, {}, {}};
  Status s = prepare(c, &t);
  if (!s.ok()) return s;
  torch::NoGradGuard no_grad;
  const torch::Tensor n = rms_norm(t.rows_view("x"), t.column_view("w"), eps);
  store(t.out("out"), modulate(n, t.table_view("shift"), t.table_view("scale"), t.idx), t.opt);
  return Status::success();
}

Status backward(const OpCall& c, double eps) {
  Tensors t{c, {}, {}, {}};
  Status s = prepare(c, &t);
  if (!s.ok()) return s;
  const torch::Tensor x = t.rows_view("x").requires_grad_(true);
  const torch::Tensor w = t.column_view("w").requires_grad_(true);
  const torch::Tensor scale = t.table_view("scale").requires_grad_(true);
  // The backward is not handed shift (its value changes no gradient): a zero
  // leaf stands in so that dshift still comes from autograd.
  const torch::Tensor shift = torch::zeros({c.p.gates, c.p.dim}, t.opt).requires_grad_(true);
  const torch::Tensor out = modulate(rms_norm(x, w, eps), shift, scale, t.idx);
  const auto grads = torch::autograd::grad({out}, {x, w, shift, scale}, {t.rows_view("grad_out")},
                                           /*retain_graph=*/false, /*create_graph=*/false,
                                           /*allow_unused=*/true);
  // An unused leaf (an empty problem) has an undefined gradient: zeros.
  auto or_zeros = [](const torch::Tensor& g, const torch::Tensor& like) {
    return g.defined() ? g : torch::zeros_like(like);
  };
  store(t.out("dx"), or_zeros(grads[0], x), t.opt);
  store(t.out("dweight"), or_zeros(grads[1], w), t.opt);
  store(t.out("dshift"), or_zeros(grads[2], shift), t.opt);
  store(t.out("dscale"), or_zeros(grads[3], scale), t.opt);
  return Status::success();
}

template <uint32_t kDevices>
int call(const gatecheck_call* raw, Pass pass) {
  const OpSchema& op = rmsnorm_modulate_schema();
  const std::string who = pass == Pass::forward ? op.fwd_name() : op.bwd_name();
  return report(guarded(who.c_str(), [&] {
    OpCall c;
    Status s = op_call_from_abi(op, pass, raw, &c);
    if (s.ok()) s = check_call(c, kDevices, /*index_on_host=*/c.p.device == GATECHECK_CPU);
    if (!s.ok()) return s;
    const double eps = c.scalars[size_t(op.scalar_index("eps"))];
    s = pass == Pass::forward ? forward(c, eps) : backward(c, eps);
    if (c.p.device == GATECHECK_CUDA) torch::cuda::synchronize();  // results visible on any stream
    return s;
  }));
}

template <uint32_t kDevices>
int forward_call(const gatecheck_call* c) { return call<kDevices>(c, Pass::forward); }
template <uint32_t kDevices>
int backward_call(const gatecheck_call* c) { return call<kDevices>(c, Pass::backward); }
const char* last_error() { return g_error.c_str(); }

constexpr uint32_t kCpu = 1u << GATECHECK_CPU, kCuda = 1u << GATECHECK_CUDA;

}  // namespace

const gatecheck_op_plugin* rmsnorm_modulate_torch_eager_plugin(Device d) {
  static const gatecheck_op_plugin cpu = {GATECHECK_ABI_VERSION_2, "torch-eager", "rmsnorm_modulate", kCpu,
                                          forward_call<kCpu>, backward_call<kCpu>, last_error};
  static const gatecheck_op_plugin cuda = {GATECHECK_ABI_VERSION_2, "torch-eager", "rmsnorm_modulate", kCuda,
                                           forward_call<kCuda>, backward_call<kCuda>, last_error};
  if (d == Device::cpu) return &cpu;
  return torch_support::torch_cuda_available() ? &cuda : nullptr;
}

}  // namespace gatecheck

// ---- the library op of the plain part (torch_plain_op.h) ----

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define GATECHECK_TORCH_HAS_RMS_NORM 1
#else
#define GATECHECK_TORCH_HAS_RMS_NORM 0
#endif

namespace gatecheck {

namespace {

using namespace torch_support;

bool is(const char* library_op, const char* name) { return library_op && std::strcmp(library_op, name) == 0; }

Status bad(const std::string& why) { return Status::error(ErrorKind::implementation, why); }

#if GATECHECK_TORCH_HAS_RMS_NORM
// at::rms_norm(input, [dim], weight, eps), on the tensors' device.
Status library_rms_norm(DType t, Device d, const std::vector<PlainTensor>& args,
                        const std::vector<double>& scalars, void* out) {
  if (args.size() != 2 || scalars.size() != 1)
    return bad("rms_norm takes 2 tensors (input, weight) and 1 scalar (eps), not " + std::to_string(args.size()) +
               " and " + std::to_string(scalars.size()));
  const PlainTensor& x = args[0];
  const PlainTensor& w = args[1];
  if (w.rows * w.cols != x.cols)
    return bad("rms_norm: weight has " + std::to_string(w.rows * w.cols) + " elements, input's rows " +
               std::to_string(x.cols));
  const auto host = torch::TensorOptions().dtype(scalar_type(int32_t(t)));
  torch::Device dev(torch::kCPU);
  if (d == Device::cuda) {
    if (!torch::cuda::is_available()) return bad("rms_norm: this LibTorch cannot run on cuda");
    int index = 0;
    cudaGetDevice(&index);
    dev = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
  }
  torch::NoGradGuard no_grad;
  // (from_blob never writes: the host buffers are only read, or copied.)
  const torch::Tensor input = wrap(x.data, {x.rows, x.cols}, host).to(dev);
  const torch::Tensor weight = wrap(w.data, {x.cols}, host).to(dev);
  const torch::Tensor result = at::rms_norm(input, {x.cols}, weight, scalars[0]);
  if (result.numel() > 0) wrap(out, {x.rows, x.cols}, host).copy_(result);
  if (d == Device::cuda) torch::cuda::synchronize();
  return Status::success();
}
#endif

}  // namespace

std::string torch_plain_op_missing(const char* library_op) {
  if (is(library_op, "rms_norm")) {
#if GATECHECK_TORCH_HAS_RMS_NORM
    return "";
#else
    return std::string("this LibTorch (") + TORCH_VERSION + ") has no rms_norm (PyTorch 2.4 and later have it)";
#endif
  }
  return std::string("this LibTorch runs no library op '") + (library_op ? library_op : "") + "' for gatecheck";
}

std::string torch_plain_op_name(const char* library_op) {
  return std::string("at::") + (library_op ? library_op : "?") + " (LibTorch " + TORCH_VERSION + ")";
}

Status torch_plain_op(const char* library_op, DType t, Device d, const std::vector<PlainTensor>& args,
                      const std::vector<double>& scalars, void* out) {
  const std::string missing = torch_plain_op_missing(library_op);
  if (!missing.empty()) return bad(missing);
  return guarded(library_op, [&] {
#if GATECHECK_TORCH_HAS_RMS_NORM
    return library_rms_norm(t, d, args, scalars, out);
#else
    (void)t, (void)d, (void)args, (void)scalars, (void)out;
    return Status::success();  // unreachable: torch_plain_op_missing said no
#endif
  });
}

}  // namespace gatecheck
