// gatecheck::gate_residual (the LibTorch op) against torch eager, from C++:
// out, grad_res and grad_y bit for bit; grad_gate within eager's own
// accumulation error (eager sums in the dtype); a strided gate view (a column
// block of a (9, 6*dim) table) and the shared-index form. grad_res is the
// incoming gradient itself. A bad index raises at the next call on the stream
// or at check_errors(). The Meta kernels and the autograd wiring run on meta
// tensors, without a GPU. Loads the op's shared library as Python would, then
// calls it through the dispatcher.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <dlfcn.h>

#include "tests/gpu.h"

namespace {

using OpFn = at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&);
using BackwardFn = std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                                      const at::Tensor&);

// Lazy binding: built against a LibTorch without CUDA, the library leaves its
// c10::cuda functions undefined, and the Meta test needs none of them.
void load_op_library() {
  static void* lib = dlopen(GATECHECK_TORCH_OP_PATH, RTLD_LAZY | RTLD_GLOBAL);
  ASSERT_NE(lib, nullptr) << dlerror();
}

c10::TypedOperatorHandle<OpFn> op() {
  load_op_library();
  return c10::Dispatcher::singleton().findSchemaOrThrow("gatecheck::gate_residual", "").typed<OpFn>();
}
c10::TypedOperatorHandle<BackwardFn> backward_op() {
  load_op_library();
  return c10::Dispatcher::singleton().findSchemaOrThrow("gatecheck::gate_residual_backward", "").typed<BackwardFn>();
}
void check_errors() {
  load_op_library();
  c10::Dispatcher::singleton().findSchemaOrThrow("gatecheck::check_errors", "").typed<void()>().call();
}

at::Tensor bits(const at::Tensor& t) {
  return t.scalar_type() == at::kFloat ? t.contiguous().view(at::kInt) : t.contiguous().view(at::kShort);
}

void check_against_eager(at::ScalarType dt, int64_t rows, int64_t dim, int64_t gates, int64_t shared_len) {
  SCOPED_TRACE(std::string(c10::toString(dt)) + " rows=" + std::to_string(rows) + " dim=" + std::to_string(dim) +
               " S=" + std::to_string(shared_len));
  torch::manual_seed(rows + dim);
  const auto o = torch::TensorOptions().dtype(dt).device(torch::kCUDA);
  const at::Tensor table = torch::randn({gates, 6 * dim}, o).requires_grad_(true);
  const at::Tensor res = torch::randn({rows, dim}, o).requires_grad_(true);
  const at::Tensor y = torch::randn({rows, dim}, o).requires_grad_(true);
  const at::Tensor go = torch::randn({rows, dim}, o);
  const at::Tensor idx_s = torch::randint(gates, {shared_len}, torch::TensorOptions().dtype(torch::kLong).device(torch::kCUDA));
  const at::Tensor idx_full = idx_s.repeat({rows / shared_len});
  const at::Tensor gate = table.narrow(1, 2 * dim, dim);  // row stride 6*dim, column stride 1

  const at::Tensor ours = op().call(res, gate, idx_s, y);
  const auto g1 = torch::autograd::grad({ours}, {res, table, y}, {go});
  const at::Tensor eager = res + gate.index_select(0, idx_full) * y;
  const auto g2 = torch::autograd::grad({eager}, {res, table, y}, {go});

  EXPECT_TRUE(torch::equal(bits(ours), bits(eager))) << "out differs from eager";
  EXPECT_TRUE(torch::equal(bits(g1[0]), bits(g2[0]))) << "grad_res differs from eager";
  EXPECT_TRUE(torch::equal(bits(g1[2]), bits(g2[2]))) << "grad_y differs from eager";
  // grad_gate lands in the table's column block only.
  EXPECT_EQ(g1[1].narrow(1, 0, 2 * dim).abs().max().item<double>(), 0.0);
  const at::Tensor ref = (go.to(torch::kDouble) * y.to(torch::kDouble)).new_zeros({gates, dim})
                             .index_add_(0, idx_full, go.to(torch::kDouble) * y.detach().to(torch::kDouble));
  const double scale = ref.abs().max().item<double>() + 1e-30;
  const double ours_err = (g1[1].narrow(1, 2 * dim, dim).to(torch::kDouble) - ref).abs().max().item<double>() / scale;
  const double eager_err = (g2[1].narrow(1, 2 * dim, dim).to(torch::kDouble) - ref).abs().max().item<double>() / scale;
  EXPECT_LE(ours_err, std::max(eager_err, 1e-2)) << "grad_gate: ours " << ours_err << " vs eager " << eager_err;
}

TEST(TorchOp, MatchesEagerBitwiseForOutAndGradY) {
  GATECHECK_REQUIRE_GPU();
  for (auto dt : {at::kBFloat16, at::kHalf, at::kFloat}) {
    check_against_eager(dt, 600, 72, 9, 600);  // one index entry per row
    check_against_eager(dt, 600, 72, 9, 120);  // shared index, 5 sequences
    check_against_eager(dt, 257, 13, 4, 257);  // odd dim: no vector path
  }
}

// The backward hands the incoming gradient on as grad_res, as eager does for
// a sum: the same storage, not a copy (the kernels do not write one).
TEST(TorchOp, GradResIsTheIncomingGradient) {
  GATECHECK_REQUIRE_GPU();
  const auto o = torch::TensorOptions().dtype(torch::kBFloat16).device(torch::kCUDA);
  const at::Tensor res = torch::randn({300, 64}, o).requires_grad_(true);
  const at::Tensor gate = torch::randn({9, 64}, o).requires_grad_(true);
  const at::Tensor y = torch::randn({300, 64}, o).requires_grad_(true);
  const at::Tensor idx = torch::randint(9, {300}, torch::TensorOptions().dtype(torch::kLong).device(torch::kCUDA));
  const at::Tensor go = torch::randn({300, 64}, o);
  const auto g = torch::autograd::grad({op().call(res, gate, idx, y)}, {res, gate, y}, {go});
  EXPECT_TRUE(g[0].is_alias_of(go) && g[0].data_ptr() == go.data_ptr()) << "grad_res is a copy of grad_out";
  EXPECT_TRUE(torch::equal(g[0], go));
}

// On meta tensors (no GPU): the output shapes, dtypes and strides the CUDA
// kernels give, the checks shared with them, and autograd through the op and
// its backward op, with grad_res the incoming gradient itself.
TEST(TorchOp, MetaKernelsAndAutogradWithoutAGpu) {
  const auto m = torch::TensorOptions().dtype(torch::kBFloat16).device(torch::kMeta);
  const auto mi = torch::TensorOptions().dtype(torch::kLong).device(torch::kMeta);
  const at::Tensor table = torch::empty({9, 6 * 40}, m).requires_grad_(true);
  const at::Tensor gate = table.narrow(1, 80, 40);
  const at::Tensor res = torch::empty({120, 40}, m).requires_grad_(true);
  const at::Tensor y = torch::empty({120, 40}, m).requires_grad_(true);
  const at::Tensor idx = torch::empty({30}, mi);  // the shared-index form
  const at::Tensor out = op().call(res, gate, idx, y);
  EXPECT_EQ(out.sizes(), res.sizes());
  EXPECT_EQ(out.scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(out.is_contiguous());
  EXPECT_TRUE(out.requires_grad()) << "no autograd node on the op's output";
  const at::Tensor go = torch::empty({120, 40}, m);
  const auto g = torch::autograd::grad({out}, {res, table, y}, {go});
  EXPECT_TRUE(g[0].is_alias_of(go)) << "grad_res is not the incoming gradient (its storage)";
  EXPECT_EQ(g[1].sizes(), table.sizes());
  EXPECT_EQ(g[2].sizes(), y.sizes());
  const auto [grad_gate, grad_y] = backward_op().call(go, gate, idx, y.detach());
  EXPECT_EQ(grad_gate.sizes(), gate.sizes());
  EXPECT_TRUE(grad_gate.is_contiguous());
  EXPECT_EQ(grad_y.sizes(), y.sizes());
  auto expect_error = [](const std::function<void()>& f, const std::string& text) {
    try {
      f();
      ADD_FAILURE() << "no error; expected: " << text;
    } catch (const c10::Error& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  expect_error([&] { op().call(res.detach(), gate.detach(), idx, y.detach().to(torch::kHalf)); },
               "gatecheck::gate_residual: res, gate and y must share one dtype");
  expect_error([&] { op().call(res.detach(), gate.detach(), idx.to(torch::kInt), y.detach()); },
               "gatecheck::gate_residual: index must be int64");
  expect_error([&] { op().call(res.detach().reshape({-1}), gate.detach(), idx, y.detach()); },
               "gatecheck::gate_residual: res must be 2-D");
}

// Without GATECHECK_OP_CHECKED, a call does not wait for the GPU: a bad index
// is raised, naming the row and the value, by the next call on the stream once
// the device has finished the bad one, or by check_errors(), which waits;
// each error once. The call after it runs.
TEST(TorchOp, BadIndexRaisesAtTheNextCallOrAtCheckErrors) {
  GATECHECK_REQUIRE_GPU();
  ASSERT_EQ(std::getenv("GATECHECK_OP_CHECKED"), nullptr) << "this test is for the default, unchecked mode";
  const auto o = torch::TensorOptions().dtype(torch::kBFloat16).device(torch::kCUDA);
  const auto l = torch::TensorOptions().dtype(torch::kLong);
  const at::Tensor bad = torch::tensor({0, 1, 9}, l).to(torch::kCUDA), good = torch::tensor({0, 1, 8}, l).to(torch::kCUDA);
  const at::Tensor x = torch::zeros({3, 8}, o), gate = torch::zeros({9, 8}, o);
  auto expect_raise = [](const std::function<void()>& f, const std::string& by) {
    try {
      f();
      ADD_FAILURE() << "no error for index 9 with 9 gates";
    } catch (const c10::Error& e) {
      EXPECT_NE(std::string(e.what()).find("index[2] = 9 is out of range [0, 9)"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("by an earlier " + by), std::string::npos) << e.what();
    }
  };
  check_errors();  // nothing pending
  op().call(x, gate, bad, x);
  torch::cuda::synchronize();
  expect_raise([&] { op().call(x, gate, good, x); }, "forward");
  EXPECT_NO_THROW(op().call(x, gate, good, x));
  op().call(x, gate, bad, x);
  expect_raise([&] { check_errors(); }, "forward");
  EXPECT_NO_THROW(check_errors());
  backward_op().call(x, gate, bad, x);
  expect_raise([&] { check_errors(); }, "backward");
  EXPECT_NO_THROW(check_errors());
  EXPECT_TRUE(torch::equal(op().call(x, gate, good, x), x));
}

}  // namespace
