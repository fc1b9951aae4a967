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

// A compared field named the comparison's own way (an operator report's
// perf.S=4097.us, accuracy.backward.cuda.repeat_bitwise_equal) shows our value
// from the comparison beside theirs, not a dash.
TEST(SweepHtml, AComparedFieldShowsOursBesideTheirs) {
  json r = report_with_git("abc123", false);
  r["compare"] = {{"against", "theirs.json"},
                  {"pairs", json::array({{{"ours", "host"},
                                          {"theirs", "cuda"},
                                          {"fields", json::array({{{"field", "perf.S=4097.us"},
                                                                   {"kind", "number"},
                                                                   {"ours", 123.5},
                                                                   {"theirs", 57.25}},
                                                                  {{"field", "perf.S=4097.peak_mib (ours: not measured)"},
                                                                   {"kind", "number"},
                                                                   {"ours", nullptr},
                                                                   {"theirs", 42.5}}})}}})}};
  const std::string page = sweep_html(r);
  EXPECT_NE(page.find("<td>123.5 <small>/ 57.25</small></td>"), std::string::npos) << page;
  EXPECT_NE(page.find("<td>&ndash; <small>/ 42.5</small></td>"), std::string::npos) << page;
}

}  // namespace
}  // namespace gatecheck
