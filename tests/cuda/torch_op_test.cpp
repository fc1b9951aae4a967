// gatecheck::gate_residual (the LibTorch op) against torch eager, from C++:
// out, grad_res and grad_y bit for bit; grad_gate within eager's own
// accumulation error (eager sums in the dtype); a strided gate view (a column
// block of a (9, 6*dim) table) and the shared-index form. Loads the op's
// shared library as Python would, then calls it through the dispatcher.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <dlfcn.h>

#include "tests/gpu.h"

namespace {

using OpFn = at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&);

c10::TypedOperatorHandle<OpFn> op() {
  static void* lib = dlopen(GATECHECK_TORCH_OP_PATH, RTLD_NOW | RTLD_GLOBAL);
  EXPECT_NE(lib, nullptr) << dlerror();
  return c10::Dispatcher::singleton().findSchemaOrThrow("gatecheck::gate_residual", "").typed<OpFn>();
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

TEST(TorchOp, BadIndexRaisesNamingRowAndValue) {
  GATECHECK_REQUIRE_GPU();
  const auto o = torch::TensorOptions().dtype(torch::kBFloat16).device(torch::kCUDA);
  const at::Tensor idx = torch::tensor({0, 1, 9}, torch::TensorOptions().dtype(torch::kLong)).to(torch::kCUDA);
  try {
    op().call(torch::zeros({3, 8}, o), torch::zeros({9, 8}, o), idx, torch::zeros({3, 8}, o));
    ADD_FAILURE() << "no error for index 9 with 9 gates";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("index[2] = 9 is out of range [0, 9)"), std::string::npos) << e.what();
  }
}

}  // namespace
