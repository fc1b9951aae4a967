// The library ops of torch_plain_op.h. at::rms_norm is what nn.RMSNorm and
// F.rms_norm run in eager mode; it exists from PyTorch 2.4 on, so an older
// LibTorch compiles without it and says so.
#include "torch_plain_op.h"

#include <torch/version.h>

#include <cstring>

#include "torch_support.h"

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
Status rms_norm(DType t, Device d, const std::vector<PlainTensor>& args, const std::vector<double>& scalars,
                void* out) {
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
    return rms_norm(t, d, args, scalars, out);
#else
    (void)t, (void)d, (void)args, (void)scalars, (void)out;
    return Status::success();  // unreachable: torch_plain_op_missing said no
#endif
  });
}

}  // namespace gatecheck
