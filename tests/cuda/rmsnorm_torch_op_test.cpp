// gatecheck::rmsnorm_modulate (the LibTorch op) from C++: through autograd,
// out, dx, dweight, dshift and dscale bit for bit against the `cuda`
// implementation (its plugin, called on the same device tensors) and against
// the host twin (the same bits on the CPU), with shift and scale as column
// blocks of a modulation table and x an unaligned view. A bad index raises
// at the next call of any of the ops on the stream, or at check_errors(),
// naming the op that found it. The Meta kernels and the autograd wiring run
// on meta tensors, without a GPU.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <dlfcn.h>

#include <functional>
#include <string>
#include <vector>

#include "kernels/cuda/rmsnorm_modulate_cuda.h"
#include "kernels/host/rmsnorm_modulate_host.h"
#include "kernels/rmsnorm_modulate.h"
#include "tests/gpu.h"

namespace {

using ForwardFn = at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                             const at::Tensor&, double);
using Grads = std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor>;
using BackwardFn = Grads(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                         const at::Tensor&, double);
using GateFn = at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&);

// Lazy binding: built against a LibTorch without CUDA, the library leaves its
// c10::cuda functions undefined, and the Meta test needs none of them.
void load_op_library() {
  static void* lib = dlopen(GATECHECK_TORCH_OP_PATH, RTLD_LAZY | RTLD_GLOBAL);
  ASSERT_NE(lib, nullptr) << dlerror();
}
template <class Fn>
c10::TypedOperatorHandle<Fn> handle(const char* name) {
  load_op_library();
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, "").typed<Fn>();
}
c10::TypedOperatorHandle<ForwardFn> op() { return handle<ForwardFn>("gatecheck::rmsnorm_modulate"); }
c10::TypedOperatorHandle<BackwardFn> backward_op() { return handle<BackwardFn>("gatecheck::rmsnorm_modulate_backward"); }
void check_errors() { handle<void()>("gatecheck::check_errors").call(); }

at::Tensor bits(const at::Tensor& t) {
  return t.scalar_type() == at::kFloat ? t.contiguous().view(at::kInt) : t.contiguous().view(at::kShort);
}

// "" when a and b agree bit for bit, else where they first differ.
std::string same_bits(const char* name, const at::Tensor& a, const at::Tensor& b) {
  if (a.sizes() != b.sizes()) return std::string(name) + ": shapes differ";
  const at::Tensor d = (bits(a).cpu() != bits(b).cpu()).reshape({-1}).nonzero();
  if (d.size(0) == 0) return "";
  return std::string(name) + ": " + std::to_string(d.size(0)) + " elements differ, first at flat " +
         std::to_string(d[0][0].item<int64_t>());
}

// One call of an ABI v2 plugin on tensors (CPU for the host twin, CUDA for
// the kernels): inputs x, w, shift, scale, index, grad_out; outputs out, dx,
// dweight, dshift, dscale. Returns the plugin's error, or "".
std::string call_plugin(const gatecheck_op_plugin* pl, gatecheck::Pass pass, const std::vector<at::Tensor>& in,
                        const std::vector<at::Tensor>& out, double eps) {
  const gatecheck::OpSchema& op = gatecheck::rmsnorm_modulate_schema();
  const at::Tensor& x = in[0];
  gatecheck_problem p{};
  p.rows = x.size(0);
  p.dim = x.size(1);
  p.gates = in[3].size(0);
  p.dtype = x.scalar_type() == at::kFloat ? GATECHECK_F32 : x.scalar_type() == at::kHalf ? GATECHECK_F16 : GATECHECK_BF16;
  p.device = x.is_cuda() ? GATECHECK_CUDA : GATECHECK_CPU;
  std::vector<gatecheck_tensor> t;
  auto add = [&](const char* name, const at::Tensor& v, bool give) {
    const bool flat = v.dim() == 1;
    t.push_back({name, v.scalar_type() == at::kLong ? GATECHECK_I64 : p.dtype, flat ? 1 : 2,
                 {v.size(0), flat ? 0 : v.size(1)}, give ? v.data_ptr() : nullptr});
  };
  for (size_t i = 0; i < op.inputs.size(); ++i)
    add(op.inputs[i].name, in[i], pass == gatecheck::Pass::backward ? op.inputs[i].in_backward || i == 5 : i < 5);
  for (size_t i = 0; i < op.outputs.size(); ++i)
    add(op.outputs[i].name, out[i], (op.outputs[i].pass == pass));
  gatecheck_scalar s{"eps", eps};
  gatecheck_call c{};
  c.op = op.name;
  c.problem = p;
  c.num_tensors = int32_t(t.size());
  c.tensors = t.data();
  c.num_scalars = 1;
  c.scalars = &s;
  const int rc = pass == gatecheck::Pass::forward ? pl->forward(&c) : pl->backward(&c);
  return rc ? std::string(pl->last_error()) : "";
}

// Forward and backward of a plugin on copies of the inputs: {out, dx, dw, dshift, dscale}.
std::vector<at::Tensor> run_plugin(const gatecheck_op_plugin* pl, std::vector<at::Tensor> in, double eps,
                                   torch::Device dev) {
  for (auto& t : in) t = t.detach().to(dev).contiguous();
  const at::Tensor& x = in[0];
  std::vector<at::Tensor> out = {torch::full_like(x, 7), torch::full_like(x, 7), torch::full_like(in[1], 7),
                                 torch::full_like(in[3], 7), torch::full_like(in[3], 7)};
  EXPECT_EQ(call_plugin(pl, gatecheck::Pass::forward, in, out, eps), "");
  EXPECT_EQ(call_plugin(pl, gatecheck::Pass::backward, in, out, eps), "");
  return out;
}

void check_against_kernels(at::ScalarType dt, int64_t rows, int64_t dim, int64_t gates, double eps, int64_t offset) {
  SCOPED_TRACE(std::string(c10::toString(dt)) + " rows=" + std::to_string(rows) + " dim=" + std::to_string(dim) +
               " gates=" + std::to_string(gates) + " x offset=" + std::to_string(offset));
  torch::manual_seed(rows + dim);
  const auto o = torch::TensorOptions().dtype(dt).device(torch::kCUDA);
  // x `offset` elements into a wider buffer (1: an unaligned view, element
  // loads); shift and scale column blocks of a (gates, 6*dim) modulation table.
  const at::Tensor x_buf = torch::randn({rows * dim + offset}, o);
  const at::Tensor x = x_buf.narrow(0, offset, rows * dim).view({rows, dim}).detach().requires_grad_(true);
  const at::Tensor w = (1 + 0.1 * torch::randn({dim}, o)).detach().requires_grad_(true);
  const at::Tensor table = (0.1 * torch::randn({gates, 6 * dim}, o)).detach().requires_grad_(true);
  const at::Tensor shift = table.narrow(1, 0, dim), scale = table.narrow(1, dim, dim);
  const at::Tensor index = torch::randint(gates, {rows}, o.dtype(torch::kLong));
  const at::Tensor go = torch::randn({rows, dim}, o);

  const at::Tensor out = op().call(x, w, shift, scale, index, eps);
  const auto g = torch::autograd::grad({out}, {x, w, table}, {go});
  EXPECT_EQ(g[2].narrow(1, 2 * dim, 4 * dim).abs().max().item<double>(), 0.0) << "grads outside shift and scale";
  const std::vector<at::Tensor> ours = {out, g[0], g[1], g[2].narrow(1, 0, dim), g[2].narrow(1, dim, dim)};

  const std::vector<at::Tensor> in = {x, w, shift, scale, index, go};
  const auto cuda = run_plugin(gatecheck::rmsnorm_modulate_cuda_plugin(), in, eps, torch::kCUDA);
  const auto host = run_plugin(gatecheck::rmsnorm_modulate_host_plugin(), in, eps, torch::kCPU);
  const char* names[] = {"out", "dx", "dweight", "dshift", "dscale"};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(same_bits(names[i], ours[i], cuda[i]), "") << "against the cuda implementation";
    EXPECT_EQ(same_bits(names[i], ours[i], host[i]), "") << "against the host twin";
  }
}

TEST(RmsnormTorchOp, AutogradMatchesTheCudaKernelsAndTheHostTwinBitwise) {
  GATECHECK_REQUIRE_GPU();
  for (auto dt : {at::kBFloat16, at::kHalf, at::kFloat}) {
    check_against_kernels(dt, 600, 64, 9, 1e-6, 0);     // every tensor aligned: vector loads
    check_against_kernels(dt, 600, 64, 9, 1e-6, 1);     // x unaligned: element loads
    check_against_kernels(dt, 257, 13, 4, 1e-5, 0);     // odd dim
    check_against_kernels(dt, 300, 40, 300, 1e-6, 0);   // about as many gates as rows
    check_against_kernels(dt, 4000, 64, 3, 1e-6, 0);    // gates of many tiles (folded partials)
  }
}

// The comparison itself can fail: eps is passed through (a different eps
// gives other bits), and so are the gradients' places.
TEST(RmsnormTorchOp, ComparisonSeesADifferentEps) {
  GATECHECK_REQUIRE_GPU();
  const auto o = torch::TensorOptions().dtype(torch::kFloat).device(torch::kCUDA);
  const at::Tensor x = 1e-3 * torch::randn({64, 32}, o), w = torch::ones({32}, o), t = torch::zeros({2, 32}, o);
  const at::Tensor index = torch::zeros({64}, o.dtype(torch::kLong));
  EXPECT_NE(same_bits("out", op().call(x, w, t, t, index, 1e-6), op().call(x, w, t, t, index, 1e-5)), "");
}

// On meta tensors (no GPU): the output shapes, dtypes and strides the CUDA
// kernels give, the checks shared with them, and autograd through the op and
// its backward op into a modulation table's column blocks.
TEST(RmsnormTorchOp, MetaKernelsAndAutogradWithoutAGpu) {
  const auto m = torch::TensorOptions().dtype(torch::kBFloat16).device(torch::kMeta);
  const auto mi = torch::TensorOptions().dtype(torch::kLong).device(torch::kMeta);
  const at::Tensor table = torch::empty({9, 6 * 40}, m).requires_grad_(true);
  const at::Tensor shift = table.narrow(1, 0, 40), scale = table.narrow(1, 40, 40);
  const at::Tensor x = torch::empty({120, 40}, m).requires_grad_(true);
  const at::Tensor w = torch::empty({40}, m).requires_grad_(true);
  const at::Tensor idx = torch::empty({120}, mi);
  const at::Tensor out = op().call(x, w, shift, scale, idx, 1e-6);
  EXPECT_EQ(out.sizes(), x.sizes());
  EXPECT_EQ(out.scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(out.is_contiguous());
  EXPECT_TRUE(out.requires_grad()) << "no autograd node on the op's output";
  const at::Tensor go = torch::empty({120, 40}, m);
  const auto g = torch::autograd::grad({out}, {x, w, table}, {go});
  EXPECT_EQ(g[0].sizes(), x.sizes());
  EXPECT_EQ(g[1].sizes(), w.sizes());
  EXPECT_EQ(g[2].sizes(), table.sizes());
  const auto [dx, dw, dshift, dscale] = backward_op().call(go, x.detach(), w.detach(), scale.detach(), idx, 1e-6);
  EXPECT_EQ(dx.sizes(), x.sizes());
  EXPECT_EQ(dw.sizes(), w.sizes());
  EXPECT_EQ(dshift.sizes(), scale.sizes());
  EXPECT_EQ(dscale.sizes(), scale.sizes());
  EXPECT_TRUE(dshift.is_contiguous() && dscale.is_contiguous()) << "the kernels write dense tables";
  // The backward's own gradient raises rather than pass as zero.
  const at::Tensor out2 = op().call(x, w, shift, scale, idx, 1e-6);
  const auto g2 = torch::autograd::grad({out2}, {x}, {go.clone().requires_grad_(true)}, /*retain_graph=*/true,
                                        /*create_graph=*/true);
  try {
    torch::autograd::grad({g2[0]}, {x}, {go});
    ADD_FAILURE() << "double backward did not raise";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("double backward"), std::string::npos) << e.what();
  }
  auto expect_error = [](const std::function<void()>& f, const std::string& text) {
    try {
      f();
      ADD_FAILURE() << "no error; expected: " << text;
    } catch (const c10::Error& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  const at::Tensor xd = x.detach(), wd = w.detach(), sh = shift.detach(), sc = scale.detach();
  expect_error([&] { op().call(xd, wd.to(torch::kHalf), sh, sc, idx, 1e-6); },
               "gatecheck::rmsnorm_modulate: w has dtype Half, x has BFloat16");
  expect_error([&] { op().call(xd, wd, sh, sc, idx.to(torch::kInt), 1e-6); },
               "gatecheck::rmsnorm_modulate: index must be int64");
  expect_error([&] { op().call(xd.reshape({-1}), wd, sh, sc, idx, 1e-6); }, "gatecheck::rmsnorm_modulate: x must be 2-D");
  expect_error([&] { op().call(xd, wd.view({1, 40}), sh, sc, idx, 1e-6); }, "gatecheck::rmsnorm_modulate: w must be 1-D");
  expect_error([&] { op().call(xd.to(torch::kDouble), wd, sh, sc, idx, 1e-6); }, "is not bf16, fp16 or fp32");
}

// On the device, the contract's checks name the argument: shapes against x
// and the table, eps.
TEST(RmsnormTorchOp, BadArgumentsAreNamed) {
  GATECHECK_REQUIRE_GPU();
  const auto o = torch::TensorOptions().dtype(torch::kBFloat16).device(torch::kCUDA);
  const at::Tensor x = torch::zeros({3, 8}, o), w = torch::ones({8}, o), t = torch::zeros({2, 8}, o);
  const at::Tensor idx = torch::zeros({3}, o.dtype(torch::kLong));
  auto expect_error = [](const std::function<void()>& f, const std::string& text) {
    try {
      f();
      ADD_FAILURE() << "no error; expected: " << text;
    } catch (const c10::Error& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  expect_error([&] { op().call(x, w, t, t, idx, 0.0); }, "eps = 0 is not positive and finite");
  expect_error([&] { op().call(x, torch::ones({7}, o), t, t, idx, 1e-6); }, "w has shape [1, 7], expected [1, 8]");
  expect_error([&] { op().call(x, w, t, torch::zeros({3, 8}, o), idx, 1e-6); }, "scale has shape [3, 8], expected [2, 8]");
  expect_error([&] { op().call(x, w, t, t, torch::zeros({4}, o.dtype(torch::kLong)), 1e-6); },
               "index has 4 entries, expected 3");
  expect_error([&] { op().call(x, w.cpu(), t, t, idx, 1e-6); }, "w is on cpu, x on cuda");
}

// Without GATECHECK_OP_CHECKED, a call does not wait for the GPU: a bad index
// is raised, naming the row, the value and the op, by the next call of an op
// on the stream once the device has finished the bad one (gate_residual's
// too: the ops share the report), or by check_errors(), which waits; each
// error once. The call after it runs.
TEST(RmsnormTorchOp, BadIndexRaisesAtTheNextCallOrAtCheckErrors) {
  GATECHECK_REQUIRE_GPU();
  ASSERT_EQ(std::getenv("GATECHECK_OP_CHECKED"), nullptr) << "this test is for the default, unchecked mode";
  const auto o = torch::TensorOptions().dtype(torch::kBFloat16).device(torch::kCUDA);
  const auto l = torch::TensorOptions().dtype(torch::kLong);
  const at::Tensor bad = torch::tensor({0, 1, 9}, l).to(torch::kCUDA), good = torch::tensor({0, 1, 8}, l).to(torch::kCUDA);
  const at::Tensor x = torch::ones({3, 8}, o), w = torch::ones({8}, o), t = torch::zeros({9, 8}, o);
  auto expect_raise = [](const std::function<void()>& f, const std::string& by) {
    try {
      f();
      ADD_FAILURE() << "no error for index 9 with 9 gates";
    } catch (const c10::Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("gatecheck::rmsnorm_modulate: index[2] = 9 is out of range [0, 9)"), std::string::npos) << m;
      EXPECT_NE(m.find("by an earlier " + by), std::string::npos) << m;
    }
  };
  check_errors();  // nothing pending
  op().call(x, w, t, t, bad, 1e-6);
  torch::cuda::synchronize();
  expect_raise([&] { op().call(x, w, t, t, good, 1e-6); }, "forward");
  EXPECT_NO_THROW(op().call(x, w, t, t, good, 1e-6));
  op().call(x, w, t, t, bad, 1e-6);
  expect_raise([&] { check_errors(); }, "forward");
  EXPECT_NO_THROW(check_errors());
  backward_op().call(x, x, w, t, bad, 1e-6);
  expect_raise([&] { check_errors(); }, "backward");
  EXPECT_NO_THROW(check_errors());
  // gate_residual's op on the same stream raises it, naming rmsnorm_modulate.
  op().call(x, w, t, t, bad, 1e-6);
  torch::cuda::synchronize();
  expect_raise([&] { handle<GateFn>("gatecheck::gate_residual").call(x, t, good, x); }, "forward");
  // And out is right after it all (x = 1, w = 1, shift = scale = 0: rstd*1).
  const at::Tensor out = op().call(x, w, t, t, good, 1e-6);
  EXPECT_EQ(same_bits("out", out, op().call(x, w, t, t, good, 1e-6)), "");
  EXPECT_LT((out.to(torch::kFloat) - 1).abs().max().item<float>(), 1e-2);
}

}  // namespace
