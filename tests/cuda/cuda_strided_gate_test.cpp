// The strided-gate entry points: a gate table [gates, 6*dim] whose column
// block j is the gate (row stride 6*dim, unit column stride) gives the same
// bits as the dense gate through the host twin, on every output; grad_gate
// stays dense. Odd row strides force the narrow path.
#include <gtest/gtest.h>

#include <random>

#include "cuda_runs.h"
#include "device_buffers.h"
#include "kernels/cuda/gate_residual_cuda.h"
#include "tests/gpu.h"

namespace gatecheck {
namespace testing_cuda {
namespace {

void check_strided(DType t, int64_t rows, int64_t dim, int64_t gates, int64_t stride, int64_t col0) {
  SCOPED_TRACE(std::string(dtype_name(t)) + " rows=" + std::to_string(rows) + " dim=" + std::to_string(dim) +
               " stride=" + std::to_string(stride) + " col0=" + std::to_string(col0));
  std::mt19937_64 rng(uint64_t(rows * 131 + dim));
  const RawCase c = make_case(rng, t, rows, dim, gates, Pattern::random);
  const RawOutputs h = run_host(c);
  // The table: random filler around the gate's column block.
  std::vector<uint32_t> table(size_t(gates * stride));
  for (auto& v : table) v = float_to_bits_rn(t, 1000.0f);  // a value that would show if read
  for (int64_t g = 0; g < gates; ++g)
    for (int64_t j = 0; j < dim; ++j) table[size_t(g * stride + col0 + j)] = c.gate[size_t(g * dim + j)];
  const size_t e = size_t(dtype_size(t)), nb = size_t(rows * dim) * e, gb = size_t(gates * dim) * e;
  DeviceBuffer res(nb), tab(table.size() * e), y(nb), out(nb), g(nb), grad_res(nb), grad_gate(gb), grad_y(nb),
      index(size_t(rows) * 8);
  res.upload(to_storage(t, c.res).data());
  tab.upload(to_storage(t, table).data());
  y.upload(to_storage(t, c.y).data());
  g.upload(to_storage(t, c.grad_out).data());
  index.upload(c.index.data());
  const gatecheck_problem p{rows, dim, gates, int32_t(t), GATECHECK_CUDA, nullptr};
  const void* gate = static_cast<const char*>(tab.get()) + size_t(col0) * e;
  const auto* idx = static_cast<const int64_t*>(index.get());
  ASSERT_TRUE(gate_residual_fwd_cuda_strided(p, res.get(), gate, stride, idx, y.get(), out.get()).ok());
  ASSERT_TRUE(gate_residual_bwd_cuda_strided(p, g.get(), gate, stride, idx, y.get(), grad_res.get(),
                                             grad_gate.get(), grad_y.get()).ok());
  ASSERT_TRUE(gate_residual_cuda_sync_status("strided", p, idx).ok());
  RawOutputs d;
  std::vector<uint8_t> buf(nb), gbuf(gb);
  out.download(buf.data());
  d.out = from_storage(t, buf);
  grad_res.download(buf.data());
  d.grad_res = from_storage(t, buf);
  grad_y.download(buf.data());
  d.grad_y = from_storage(t, buf);
  grad_gate.download(gbuf.data());
  d.grad_gate = from_storage(t, gbuf);
  EXPECT_EQ(compare_outputs(c, d, h), "");
}

TEST(CudaStridedGate, ColumnBlockOfWiderTableBitIdentical) {
  GATECHECK_REQUIRE_GPU();
  for (DType t : {DType::bf16, DType::f16, DType::f32}) {
    check_strided(t, 700, 64, 9, 6 * 64, 2 * 64);  // H3's (9, 6*dim) table, block 2: vector path
    check_strided(t, 300, 64, 5, 6 * 64 + 1, 3);   // odd stride and offset: narrow path
    check_strided(t, 40, 7, 3, 7, 0);              // dense stride: same as the plain API
  }
}

TEST(CudaStridedGate, StrideBelowDimRejected) {
  const gatecheck_problem p{2, 8, 2, GATECHECK_F32, GATECHECK_CUDA, nullptr};
  float x = 0;
  int64_t i = 0;
  const Status s = gate_residual_fwd_cuda_strided(p, &x, &x, 4, &i, &x, &x);
  EXPECT_EQ(s.kind, ErrorKind::shape_mismatch) << s.message;
  EXPECT_NE(s.message.find("row stride 4 < 8"), std::string::npos) << s.message;
}

}  // namespace
}  // namespace testing_cuda
}  // namespace gatecheck
