// Which of rmsnorm_modulate's outputs each property reads, from its schema's
// roles alone: row_invariance the row-wise out and dx; segment_invariance the
// per-index sums dshift and dscale; repeatable all five. dweight, a sum over
// every row, is in neither invariance (its order under a batch plan is the
// split-invariance question); eager_exact pins out alone (the eager model).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/rmsnorm_modulate.h"
#include "properties/catalog/property_catalog.h"

namespace gatecheck {
namespace {

std::vector<std::string> read_by(const char* property) {
  const OpSchema& op = rmsnorm_modulate_schema();
  std::vector<std::string> names;
  for (int i : outputs_read(property_info(property), op)) names.push_back(op.outputs[size_t(i)].name);
  return names;
}

using Names = std::vector<std::string>;

TEST(RmsnormModulateRoles, EachPropertyReadsTheOutputsOfItsRole) {
  EXPECT_EQ(read_by("row_invariance"), (Names{"out", "dx"}));
  EXPECT_EQ(read_by("segment_invariance"), (Names{"dshift", "dscale"}));
  EXPECT_EQ(read_by("repeatable"), (Names{"out", "dx", "dweight", "dshift", "dscale"}));
  EXPECT_EQ(read_by("accuracy"), (Names{"out", "dx", "dweight", "dshift", "dscale"}));
  EXPECT_EQ(read_by("eager_exact"), (Names{"out"}));
}

TEST(RmsnormModulateRoles, TheDefaultSetIsEveryDefaultProperty) {
  // Each default property applies: the op has row-wise and segment outputs.
  EXPECT_EQ(default_properties_for(rmsnorm_modulate_schema()), default_properties());
}

}  // namespace
}  // namespace gatecheck
