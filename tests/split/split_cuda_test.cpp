// cuda-repro against host-repro: the same state words and the same grad_gate
// bits, and split_invariance and accuracy on it, at small and at H3 sizes.
// Skips without a GPU.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <vector>

#include "case/case_spec.h"
#include "kernels/cuda/gate_residual_repro_cuda.h"
#include "kernels/host/gate_residual_repro_host.h"
#include "properties/checks/properties.h"
#include "tests/gpu.h"

namespace gatecheck {
namespace {

Case drawn(DType t, int64_t rows, int64_t dim, int64_t gates, const char* values, uint64_t seed) {
  Case c = make_case(t, rows, dim, gates);
  c.index = make_index("uniform", rows, gates, seed);
  fill_values(&c, values, seed);
  return c;
}

template <class T>
T* up(const std::vector<T>& v) {
  T* d = nullptr;
  cudaMalloc(reinterpret_cast<void**>(&d), v.size() * sizeof(T) + 1);
  cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice);
  return d;
}
void* up_bytes(const HostTensor& t) { return up(t.bytes); }

// The device partial's words equal the host's, for every dtype and class.
TEST(SplitCuda, PartialStateEqualsTheHosts) {
  GATECHECK_REQUIRE_GPU();
  for (DType t : {DType::bf16, DType::f16, DType::f32})
    for (const char* values : {"normal", "order_sensitive", "subnormal", "near_overflow", "nan_inf"}) {
      const Case c = drawn(t, 1000, 37, 5, values, 3);
      const gatecheck_problem p = c.problem(Device::cpu);
      std::vector<uint64_t> host(size_t(gate_residual_repro_state_words(p)));
      ASSERT_TRUE(gate_residual_repro_partial(p, c.input("grad_out").data(), c.index.data(), c.input("y").data(),
                                              host.data()).ok());
      void* g = up_bytes(c.input("grad_out"));
      void* y = up_bytes(c.input("y"));
      int64_t* index = up(c.index);
      uint64_t* state = up(std::vector<uint64_t>(host.size(), 0));
      gatecheck_problem dp = c.problem(Device::cuda);
      ASSERT_TRUE(gate_residual_repro_partial_cuda(dp, g, index, y, state).ok());
      std::vector<uint64_t> dev(host.size());
      cudaMemcpy(dev.data(), state, dev.size() * sizeof(uint64_t), cudaMemcpyDeviceToHost);
      EXPECT_EQ(dev, host) << describe(c);
      for (void* q : {g, y, static_cast<void*>(index), static_cast<void*>(state)}) cudaFree(q);
    }
}

// Through the engine: every default property, and split_invariance, on cuda-repro.
TEST(SplitCuda, CudaReproKeepsItsClaims) {
  GATECHECK_REQUIRE_GPU();
  const Subject s = make_subject("cuda-repro", Device::cuda);
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    Case c = drawn(std::vector<DType>{DType::bf16, DType::f16, DType::f32}[seed % 3], 300, 40, 4,
                   seed % 2 ? "normal" : "order_sensitive", seed);
    c.plan = make_plan(split_plan_kinds()[seed % 3], c, seed);
    for (const char* prop : {"split_invariance", "accuracy", "repeatable", "full_write"}) {
      const Verdict v = check_property(prop, s, c);
      EXPECT_TRUE(v.passed) << prop << " on " << describe(c) << ": " << v.message;
    }
  }
}

// At H3's width: 32768 x 3072, 32 gates, bf16; grad_gate equals host-repro's bit for bit.
TEST(SplitCuda, H3SizeEqualsHostRepro) {
  GATECHECK_REQUIRE_GPU();
  const Implementation cuda = make_implementation("cuda-repro", Device::cuda);
  const Implementation host = make_implementation("host-repro", Device::cpu);
  Case c = drawn(DType::bf16, 32768, 3072, 32, "normal", 9);
  const RunResult a = run_case(cuda, c), b = run_case(host, c);
  ASSERT_TRUE(a.status.ok()) << a.status.message;
  ASSERT_TRUE(b.status.ok()) << b.status.message;
  EXPECT_TRUE(a.outputs["grad_gate"] == b.outputs["grad_gate"]);
}

}  // namespace
}  // namespace gatecheck
