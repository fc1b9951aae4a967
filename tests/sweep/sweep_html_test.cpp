// The sweep's page from a report written where facts were unknown: an
// exported tree (git archive, a tarball, a container) has no commit and no
// dirty flag, and the report holds null for them. The page must still render
// and say "unknown" rather than throw.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sweep/sweep_html.h"

namespace gatecheck {
namespace {

using nlohmann::json;

json report_with_git(const json& commit, const json& dirty) {
  json r;
  r["commit"] = commit;
  r["tracked_tree_dirty"] = dirty;
  r["gatecheck_version"] = nullptr;
  r["command"] = nullptr;
  r["seconds"] = nullptr;
  r["interrupted"] = nullptr;
  r["quick"] = nullptr;
  r["environment"] = {{"gpu", nullptr}, {"driver", nullptr}};
  r["results"]["plain"]["host"]["gatecheck"] = {
      {"verdicts", {{"repeatable", "pass"}}}, {"failed_comparisons", {{"repeatable", nullptr}}}, {"error", nullptr}};
  r["results"]["plain"]["host"]["gatecheck"]["failures"] =
      json::array({{{"check", "repeatable"}, {"verdict", nullptr}, {"repro", nullptr}, {"detail", nullptr}}});
  return r;
}

TEST(SweepHtml, NullGitFieldsRenderAsUnknown) {
  std::string page;
  ASSERT_NO_THROW(page = sweep_html(report_with_git(nullptr, nullptr)));
  EXPECT_NE(page.find("(tracked files: unknown)"), std::string::npos);
  EXPECT_NE(page.find("</html>"), std::string::npos);
}

TEST(SweepHtml, KnownDirtyTreeIsSaidAndACleanOneIsNot) {
  const std::string dirty = sweep_html(report_with_git("abc123", true));
  EXPECT_NE(dirty.find("abc123 (tracked files changed)"), std::string::npos);
  const std::string clean = sweep_html(report_with_git("abc123", false));
  EXPECT_EQ(clean.find("tracked files"), std::string::npos);
}

}  // namespace
}  // namespace gatecheck
