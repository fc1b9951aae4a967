// Properties found by what they do (properties/catalog/property_roles.h): the
// sweep names the properties its comparisons stand for without spelling them.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "properties/catalog/property_roles.h"

namespace gatecheck {
namespace {

TEST(PropertyRoles, InvarianceByOutputKind) {
  EXPECT_EQ(std::string(invariance_property(OutputKind::rowwise).name), "row_invariance");
  EXPECT_EQ(std::string(invariance_property(OutputKind::segment_sum).name), "segment_invariance");
  // A sum over every row is compared only under splits (split_invariance), not batch plans.
  EXPECT_THROW(invariance_property(OutputKind::all_rows_sum), std::logic_error);
}

TEST(PropertyRoles, RepeatedRuns) { EXPECT_EQ(std::string(repeat_property().name), "repeatable"); }

TEST(PropertyRoles, JudgedAgainstAReference) {
  EXPECT_TRUE(judged_against_reference("accuracy"));
  EXPECT_TRUE(judged_against_reference("eager_exact"));
  for (const char* p : {"full_write", "repeatable", "row_invariance", "split_invariance", "no such property"})
    EXPECT_FALSE(judged_against_reference(p)) << p;
}

}  // namespace
}  // namespace gatecheck
