// The scale tier on a GPU (label gpu; skips without one): the device backend
// generates the same inputs and computes the same fingerprints and exact
// checks as the host backend, and the planted CUDA plugins fail where they
// must while the correct ones pass.
#include <gtest/gtest.h>

#include "harness/scale/scale_backend.h"
#include "harness/scale/scale_session.h"
#include "kernels/rmsnorm_modulate.h"
#include "properties/catalog/contract.h"
#include "properties/scale/scale_properties.h"
#include "tests/gpu.h"
#include "tests/scale/test_scale_spec.h"

namespace gatecheck {
namespace {

ScaleCase scale_case(DType t, int64_t rows, int64_t dim, int64_t gates, ScaleValues v, const std::string& pattern,
                     int64_t segment = 0, const std::string& plan = "partition") {
  return test::scale_case(41, t, rows, dim, gates, v, pattern, segment, plan);
}

Subject plugin(const char* bug) {
  return make_subject(std::string("plugin:") + GC_SCALE_CUDA_DIR + "/gc_scale_cuda_" + bug + ".so", Device::cuda);
}

// cuda and its host twin are bit-identical, so their sessions' fingerprints
// agree only if the device generated the host's inputs and hashed rows alike.
TEST(ScaleGpu, DeviceBackendAgreesWithHost) {
  GATECHECK_REQUIRE_GPU();
  for (ScaleValues v : {ScaleValues::exact, ScaleValues::rounding}) {
    const ScaleCase c = scale_case(DType::f16, 70000, 33, 9, v, "long_segment", 40000);
    ScaleSession dev(make_subject("cuda", Device::cuda), c, 1), host(make_subject("host", Device::cpu), c, 1);
    ASSERT_TRUE(dev.run(0, nullptr).ok());
    ASSERT_TRUE(host.run(0, nullptr).ok());
    for (ScaleOutput o = 0; o < ScaleOutput(c.op().outputs.size()); ++o) {
      EXPECT_EQ(dev.prints(0, o), host.prints(0, o)) << scale_output_name(c, o);
      if (v == ScaleValues::exact) {
        EXPECT_TRUE(dev.exact(0, o).ok()) << scale_output_name(c, o);
        EXPECT_TRUE(host.exact(0, o).ok()) << scale_output_name(c, o);
      }
    }
    EXPECT_TRUE(dev.inputs_changed().empty());
    EXPECT_TRUE(dev.guards().empty());
  }
}

// rmsnorm_modulate's CUDA kernels on a case past the grid's rows: the device
// generates every tensor by its role (w from its column alone) as the host
// does, inputs_untouched sees them unchanged, and the kernels pass every
// scale property with the sampled oracle streaming dweight over every row.
TEST(ScaleGpu, RmsnormModulateOnTheDevice) {
  GATECHECK_REQUIRE_GPU();
  ScaleSpec s = test::scale_spec(43, DType::bf16, 70000, 33, 9, ScaleValues::rounding, "long_segment", 40000,
                                 "gate_groups");
  s.op = &rmsnorm_modulate_schema();
  s.scalars = {1e-5};
  const ScaleCase c = make_scale_case(s);
  const Subject cuda = make_subject("cuda", Device::cuda, rmsnorm_modulate_schema());
  ScaleSession dev(cuda, c, 1), host(make_subject("host", Device::cpu, rmsnorm_modulate_schema()), c, 1);
  ASSERT_TRUE(dev.run(0, nullptr).ok());
  ASSERT_TRUE(host.run(0, nullptr).ok());
  EXPECT_TRUE(dev.inputs_changed().empty());
  EXPECT_TRUE(dev.guards().empty());
  // dshift is a per-gate fp32 sum of g in batch order on both (rmsnorm_modulate_order.h)
  const int dshift = c.op().output_index("dshift");
  EXPECT_EQ(dev.prints(0, dshift), host.prints(0, dshift));
  for (const char* p : {"accuracy", "row_invariance", "segment_invariance", "repeatable", "inputs_untouched",
                        "full_write", "no_oob_write"}) {
    const Verdict v = check_scale_property(p, cuda, c);
    EXPECT_TRUE(v.passed) << p << ": " << v.message;
  }
}

TEST(ScaleGpu, CorrectPluginsPass) {
  GATECHECK_REQUIRE_GPU();
  for (const char* name : {"correct", "fused"})
    for (const char* p : {"accuracy", "repeatable", "row_invariance", "full_write"}) {
      const ScaleCase c = scale_case(DType::bf16, 65537, 129, 9, std::string(p) == "accuracy" ? ScaleValues::exact : ScaleValues::rounding,
                                     "long_segment", 20000, "probe");
      const Verdict v = check_scale_property(p, plugin(name), c);
      EXPECT_TRUE(v.passed) << name << " " << p << ": " << v.message;
    }
}

TEST(ScaleGpu, GridLimitPluginFailsPast65535Rows) {
  GATECHECK_REQUIRE_GPU();
  const Subject grid = plugin("grid_limit");
  EXPECT_TRUE(check_scale_property("full_write", grid, scale_case(DType::bf16, 65535, 8, 3, ScaleValues::rounding, "uniform")).passed);
  const Verdict v = check_scale_property("full_write", grid, scale_case(DType::bf16, 65537, 8, 3, ScaleValues::rounding, "uniform"));
  ASSERT_FALSE(v.passed);
  EXPECT_NE(v.message.find("first at [65535, 0]"), std::string::npos) << v.message;
}

TEST(ScaleGpu, AtomicOrderPluginIsNotRepeatable) {
  GATECHECK_REQUIRE_GPU();
  const Subject atomic = plugin("atomic_order");
  int failed = 0;
  for (int k = 0; k < 5 && !failed; ++k) {
    ScaleCheckOptions o;
    o.stress_seed = uint64_t(k);
    const Verdict v =
        check_scale_property("repeatable", atomic, scale_case(DType::f32, 70000 + k, 256, 3, ScaleValues::cancelling,
                                                              "long_segment", 65536),
                             o);
    failed += !v.passed;
  }
  EXPECT_EQ(failed, 1);
}

TEST(ScaleGpu, Offsets32PluginFailsPast2To31Elements) {
  GATECHECK_REQUIRE_GPU();
  const ScaleCase c = scale_case(DType::bf16, 699100, 3072, 9, ScaleValues::exact, "uniform");
  if (scale_free_bytes(Device::cuda) < (uint64_t(32) << 30)) GTEST_SKIP() << "needs 32 GiB of free device memory";
  const Verdict v = check_scale_property("accuracy", plugin("offsets32"), c);
  ASSERT_FALSE(v.passed);
  EXPECT_TRUE(check_scale_property("accuracy", plugin("correct"), c).passed);
}

}  // namespace
}  // namespace gatecheck
