// The eager rounding model against LibTorch itself (torch-eager on the CPU):
// every output bit for bit, grad_gate included, which confirms that LibTorch
// 1.13's CPU index_add accumulates sequentially in row order in the dtype,
// as eager_model() assumes. NaN payloads are LibTorch's own (nan_any).
#include <gtest/gtest.h>

#include "tests/gate_residual_test_names.h"
#include "kernels/torch/torch_eager.h"
#include "oracle_test_support.h"

namespace gatecheck::testing {
namespace {

Outputs run_torch_cpu(const Case& c) {
  const gatecheck_plugin* api = torch_eager_plugin(Device::cpu);
  if (!api) throw std::runtime_error("torch-eager is not available on the CPU");
  Outputs o = outputs_for(c);
  const gatecheck_problem p = c.problem(Device::cpu);
  int rc = api->forward(&p, c.input("res").data(), c.input("gate").data(), c.index.data(), c.input("y").data(), o["out"].data());
  if (rc == 0)
    rc = api->backward(&p, c.input("grad_out").data(), c.input("gate").data(), c.index.data(), c.input("y").data(), o["grad_res"].data(),
                       o["grad_gate"].data(), o["grad_y"].data());
  if (rc != 0) throw std::runtime_error(std::string("torch-eager failed: ") + api->last_error());
  return o;
}

TEST(EagerModelVsTorch, EveryOutputBitForBit) {
  uint64_t seed = 7000;
  for (DType t : kAllDTypes)
    for (Values v : kAllValues)
      for (auto [rows, dim, gates] : {std::tuple{1, 1, 1}, {97, 13, 3}, {600, 4, 2}}) {
        const Case c = random_case(t, rows, dim, gates, v, ++seed);
        const Outputs model = eager_model(c), torch = run_torch_cpu(c);
        for (const char* name : kOutputNames) {
          const Comparison cmp =
              compare_bitwise(name, model[name], torch[name], /*nan_any=*/true);
          EXPECT_TRUE(cmp.ok()) << describe(c) << " seed " << seed << "\n" << cmp.summary();
        }
      }
}

// The prior art's long segment: torch's bf16 grad_gate is reproduced bit for
// bit by the model, so the model's accuracy finding is torch's.
TEST(EagerModelVsTorch, LongBf16SegmentGradGate) {
  const Case c = random_case(DType::bf16, 4097, 32, 1, Values::normal, 4097);
  const Comparison cmp = compare_bitwise("grad_gate", eager_model(c)["grad_gate"], run_torch_cpu(c)["grad_gate"]);
  EXPECT_TRUE(cmp.ok()) << cmp.summary();
  EXPECT_FALSE(compare_accuracy("grad_gate", run_torch_cpu(c)["grad_gate"], oracle_reference(c)["grad_gate"]).ok());
}

}  // namespace
}  // namespace gatecheck::testing
