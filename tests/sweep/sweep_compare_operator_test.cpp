// --compare against an operator report (RL-Kernel's rmsnorm report): a pair
// whose every figure is theirs marks nothing, and a planted wrong value (a
// verdict flipped) is marked as differing, so a broken comparator fails here.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "sweep/sweep_compare.h"

namespace gatecheck {
namespace {

using nlohmann::json;

json their_report() {
  std::ifstream f(GC_RMSNORM_REFERENCE);
  return json::parse(f);
}

// Our entry for `spec` holding exactly their row's figures.
json ours_as(const json& theirs, const std::string& spec, const std::string& row) {
  const json& back = theirs["accuracy"]["backward"][row];
  json rep = {{"rows_batch_invariant", theirs["accuracy"]["rows_batch_invariant"]},
              {"repeat_bitwise_equal", back["repeat_bitwise_equal"]},
              {"bitwise_vs_eager_model", {{"out", theirs["accuracy"]["modulated_bitwise_vs_diffusers"]}}},
              // their four norms are each plain-bitwise; ours is one comparison
              {"plain_bitwise_vs_nn_rmsnorm", true},
              {"rel_error", back["rel_error"]}};
  json perf = json::array();
  const std::string pre = row == "cuda" ? "candidate_" : "provider_";
  for (const json& p : theirs["perf"])
    perf.push_back({{"case", p["case"]}, {"fwd_us", p[pre + "us"]}, {"backward_us", p[pre + "backward_us"]}});
  rep["perf"] = perf;
  return {{"op", "rmsnorm_modulate"},
          {"quick", false},
          {"results", {{"plain", {{spec + "@x", {{"spec", spec}, {"operator_report", rep}}}}}}}};
}

const json* field(const json& pair, const std::string& name) {
  for (const json& f : pair["fields"])
    if (f["field"] == name) return &f;
  return nullptr;
}

TEST(SweepCompareOperator, TheirOwnFiguresMarkNothing) {
  const json theirs = their_report();
  for (auto [spec, row] : {std::pair<std::string, std::string>{"cuda", "cuda"}, {"torch-eager", "provider"}}) {
    const json c = compare_reports(ours_as(theirs, spec, row), theirs, "theirs.json");
    ASSERT_EQ(c["pairs"].size(), 1u) << spec;
    const json& p = c["pairs"][0];
    EXPECT_EQ(p["theirs"], row);
    EXPECT_EQ(c["verdicts_differ"], 0) << c.dump(1);
    const json* dx = field(p, "rel_error.dx");
    ASSERT_NE(dx, nullptr);
    EXPECT_EQ((*dx)["ours"], theirs["accuracy"]["backward"][row]["rel_error"]["dx"]);
    EXPECT_DOUBLE_EQ((*dx)["theirs_over_ours"].get<double>(), 1.0);
    const json* us = field(p, "perf.S=32768.backward_us");
    ASSERT_NE(us, nullptr);
    EXPECT_DOUBLE_EQ((*us)["theirs_over_ours"].get<double>(), 1.0);
  }
}

TEST(SweepCompareOperator, APlantedWrongVerdictIsMarked) {
  const json theirs = their_report();
  json ours = ours_as(theirs, "cuda", "cuda");
  json& rep = ours["results"]["plain"]["cuda@x"]["operator_report"];
  rep["repeat_bitwise_equal"] = false;       // theirs: true
  rep["rows_batch_invariant"] = false;       // theirs: true
  rep["bitwise_vs_eager_model"]["out"] = false;
  rep["plain_bitwise_vs_nn_rmsnorm"] = false;  // beside each of their four norms' true
  const json c = compare_reports(ours, theirs, "theirs.json");
  ASSERT_EQ(c["pairs"].size(), 1u);
  const json& p = c["pairs"][0];
  EXPECT_EQ(c["verdicts_differ"], 3 + 4);
  for (const char* f : {"accuracy.backward.cuda.repeat_bitwise_equal", "accuracy.rows_batch_invariant",
                        "accuracy.modulated_bitwise_vs_diffusers",
                        "accuracy.plain_bitwise_vs_nn_rmsnorm.transformer_blocks.0.norm1.weight",
                        "accuracy.plain_bitwise_vs_nn_rmsnorm.norm_out.norm.weight"}) {
    const json* x = field(p, f);
    ASSERT_NE(x, nullptr) << f;
    EXPECT_TRUE((*x)["differs"].get<bool>()) << f;
  }
  // A wrong number is beside theirs with its ratio.
  rep["rel_error"]["dscale"] = 0.028;
  const json d = compare_reports(ours, theirs, "theirs.json");
  const json* ds = field(d["pairs"][0], "rel_error.dscale");
  ASSERT_NE(ds, nullptr);
  EXPECT_NEAR((*ds)["theirs_over_ours"].get<double>(), 0.1011, 1e-3);
}

// Our plain field is null where this LibTorch has no rms_norm: not computed,
// which is no verdict differing from theirs.
TEST(SweepCompareOperator, APlainFieldNotComputedMarksNothing) {
  const json theirs = their_report();
  json ours = ours_as(theirs, "cuda", "cuda");
  ours["results"]["plain"]["cuda@x"]["operator_report"]["plain_bitwise_vs_nn_rmsnorm"] = nullptr;
  const json c = compare_reports(ours, theirs, "theirs.json");
  EXPECT_EQ(c["verdicts_differ"], 0);
  const json* x = field(c["pairs"][0], "accuracy.plain_bitwise_vs_nn_rmsnorm.norm_out.norm.weight (ours: not computed)");
  ASSERT_NE(x, nullptr) << c.dump(1);
  EXPECT_TRUE((*x)["ours"].is_null());
  EXPECT_EQ((*x)["theirs"], true);
}

TEST(SweepCompareOperator, AnImplementationWithoutARowIsUnpaired) {
  const json theirs = their_report();
  json ours = ours_as(theirs, "host", "cuda");
  const json c = compare_reports(ours, theirs, "theirs.json");
  EXPECT_TRUE(c["pairs"].empty());
  EXPECT_EQ(c["ours_unpaired"], json::array({"host@x"}));
  EXPECT_EQ(c["theirs_unpaired"], json::array({"cuda", "provider"}));
}

// The Python peers stand beside their row whichever module names them: the
// project's op as called beside their kernel, diffusers' composition beside
// their eager provider. torch.compile, and a look-alike name outside
// gatecheck's peers, have no row of theirs.
TEST(SweepCompareOperator, PythonPeersPairByWhatTheyAre) {
  const json theirs = their_report();
  const std::vector<std::pair<std::string, std::string>> paired{
      {"python:gatecheck.peers:rmsnorm_modulate_gatecheck_op", "cuda"},
      {"python:gatecheck.peers_rmsnorm_modulate:rmsnorm_modulate_gatecheck_op", "cuda"},
      {"python:gatecheck.peers:gatecheck_op", "cuda"},
      {"python:gatecheck.peers:rmsnorm_modulate_diffusers", "provider"},
      {"python:gatecheck.peers_rmsnorm_modulate:rmsnorm_modulate_diffusers", "provider"},
      {"python:gatecheck.peers:diffusers_eager", "provider"}};
  for (const auto& [spec, row] : paired) {
    const json c = compare_reports(ours_as(theirs, spec, row), theirs, "theirs.json");
    ASSERT_EQ(c["pairs"].size(), 1u) << spec;
    EXPECT_EQ(c["pairs"][0]["theirs"], row) << spec;
    EXPECT_EQ(c["verdicts_differ"], 0) << spec;
  }
  for (const std::string spec :
       {"python:gatecheck.peers_rmsnorm_modulate:rmsnorm_modulate_compiled", "python:gatecheck.peers:compiled",
        "python:mine:rmsnorm_modulate_gatecheck_op", "python:gatecheck.peersx:gatecheck_op", "plugin:gatecheck_op"}) {
    const json c = compare_reports(ours_as(theirs, spec, "cuda"), theirs, "theirs.json");
    EXPECT_TRUE(c["pairs"].empty()) << spec;
    EXPECT_EQ(c["ours_unpaired"], json::array({spec + "@x"})) << spec;
  }
}

// Each size's bytes beside theirs; peak memory we did not measure is named so
// (and our figure shows where we have one); the note says how their
// backward_gbps counts bytes.
TEST(SweepCompareOperator, BytesBesideTheirsAndPeakNotMeasuredByName) {
  const json theirs = their_report();
  json ours = ours_as(theirs, "cuda", "cuda");
  json& perf = ours["results"]["plain"]["cuda@x"]["operator_report"]["perf"];
  for (size_t i = 0; i < perf.size(); ++i) perf[i]["bytes"] = theirs["perf"][i]["bytes"];
  perf[0]["fwd_peak_mib"] = 40.0;
  perf[0]["backward_peak_mib"] = nullptr;
  const json c = compare_reports(ours, theirs, "theirs.json");
  ASSERT_EQ(c["pairs"].size(), 1u);
  const json& p = c["pairs"][0];
  const json* bytes = field(p, "perf.S=4097.bytes");
  ASSERT_NE(bytes, nullptr) << p.dump(1);
  EXPECT_DOUBLE_EQ((*bytes)["theirs_over_ours"].get<double>(), 1.0);
  const json* peak = field(p, "perf.S=4097.peak_mib");
  ASSERT_NE(peak, nullptr) << p.dump(1);
  EXPECT_EQ((*peak)["ours"], 40.0);
  EXPECT_EQ(field(p, "perf.S=4097.peak_mib (ours: not measured)"), nullptr);
  const json* bwd_peak = field(p, "perf.S=4097.backward_peak_mib (ours: not measured)");
  ASSERT_NE(bwd_peak, nullptr) << p.dump(1);
  EXPECT_TRUE((*bwd_peak)["ours"].is_null());
  EXPECT_EQ((*bwd_peak)["theirs"], theirs["perf"][0]["candidate_backward_peak_mib"]);
  EXPECT_NE(field(p, "perf.S=32768.peak_mib (ours: not measured)"), nullptr);
  EXPECT_NE(c.value("note", "").find("backward_bytes"), std::string::npos) << c.dump(1);
}

}  // namespace
}  // namespace gatecheck
