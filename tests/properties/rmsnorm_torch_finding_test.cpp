// torch eager's row_invariance finding on rmsnorm_modulate (its CPU contract
// withdraws row_invariance) is about NaN bits only: on every value class
// without NaN or Inf, every row of out and dx is bit-identical under every
// batch plan; with NaN inputs some NaN's bits depend on the row's place in
// the batch (LibTorch's vectorised body or scalar tail). Skips, saying why,
// without LibTorch.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "case/case_spec.h"
#include "kernels/rmsnorm_modulate.h"
#include "properties/checks/properties.h"

namespace gatecheck {
namespace {

const OpSchema& op() { return rmsnorm_modulate_schema(); }

Case make(DType t, int64_t rows, int64_t dim, const std::string& values, const std::string& plan, uint64_t seed) {
  CaseSpec s;
  s.op = &op();
  s.dtype = t;
  s.rows = rows;
  s.dim = dim;
  s.gates = 3;
  s.value_class = values;
  s.plan_kind = plan;
  s.index_seed = seed;
  s.value_seed = seed + 1;
  s.plan_seed = seed + 2;
  return make_case_from_spec(s);
}

bool torch_eager(Implementation* impl, std::string* why) {
  try {
    *impl = make_implementation("torch-eager", Device::cpu, op());
    return true;
  } catch (const std::runtime_error& e) {
    *why = e.what();
    return false;
  }
}

TEST(RmsnormModulateTorchFinding, RowInvariantWithoutNaN) {
  Implementation eager;
  std::string why;
  if (!torch_eager(&eager, &why)) GTEST_SKIP() << why;
  uint64_t seed = 1;
  int64_t cases = 0;
  for (DType t : {DType::f32, DType::bf16, DType::f16})
    for (const char* values : {"normal", "binade_span", "mixed_magnitude", "order_sensitive", "small_int", "subnormal",
                               "zero_rows", "signed_zero"})
      for (const char* plan : {"partition", "singletons", "prior_art", "permutation", "reversal"})
        for (auto [rows, dim] : {std::pair{17, 13}, {40, 67}}) {
          const Case c = make(t, rows, dim, values, plan, seed += 3);
          const Verdict v = check_property("row_invariance", eager, c);
          ++cases;
          EXPECT_TRUE(v.passed) << describe(c) << "\n" << v.message;
        }
  EXPECT_EQ(cases, 3 * 8 * 5 * 2);
}

TEST(RmsnormModulateTorchFinding, NaNBitsDependOnTheRowsPlace) {
  Implementation eager;
  std::string why;
  if (!torch_eager(&eager, &why)) GTEST_SKIP() << why;
  int failing = 0;
  std::string evidence;
  for (uint64_t seed = 1; seed <= 30 && failing == 0; ++seed) {
    const Verdict v = check_property("row_invariance", eager, make(DType::f32, 17, 13, "nan_inf", "singletons", seed));
    if (!v.passed) {
      ++failing;
      evidence = v.message;
    }
  }
  ASSERT_GT(failing, 0) << "no NaN case moved a NaN's bits in 30 seeds";
  EXPECT_NE(evidence.find("NaN payloads differ"), std::string::npos) << evidence;
}

}  // namespace
}  // namespace gatecheck
