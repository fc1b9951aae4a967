// Corpus files: bit-exact round trips for every dtype and special value, and
// clear errors for corrupt, truncated or wrong-version files.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "case/case_json.h"
#include "case/case_snapshot.h"
#include "kernels/rmsnorm_modulate.h"

namespace gatecheck {
namespace {

// Every special value of each dtype, as bits.
std::vector<uint32_t> specials(DType t) {
  switch (t) {
    case DType::f32:  // +0 -0 1 -1 min-subnormal max-subnormal min-normal max +inf -inf qNaN sNaN-payload -NaN
      return {0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x00000001, 0x007fffff, 0x00800000,
              0x7f7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0xffc12345};
    case DType::f16:
      return {0x0000, 0x8000, 0x3c00, 0xbc00, 0x0001, 0x03ff, 0x0400, 0x7bff, 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0xfe55};
    default:
      return {0x0000, 0x8000, 0x3f80, 0xbf80, 0x0001, 0x007f, 0x0080, 0x7f7f, 0x7f80, 0xff80, 0x7fc0, 0x7f81, 0xffd5};
  }
}

Case special_case(DType t) {
  const auto sp = specials(t);
  Case c = make_case(t, 3, int64_t(sp.size()), 2);
  c.index = {1, 0, 1};
  for (HostTensor* x : {&c.input("res"), &c.input("gate"), &c.input("y"), &c.input("grad_out")})
    for (int64_t i = 0; i < x->numel(); ++i) x->set_bits(i, sp[size_t((i * 7 + x->rows) % int64_t(sp.size()))]);
  c.plan = BatchPlan{"partition", {{0, 1}, {2}}, 0};
  c.index_pattern = "identity";
  c.value_class = "specials";
  return c;
}

class CaseFileRoundTrip : public ::testing::TestWithParam<DType> {};

TEST_P(CaseFileRoundTrip, JsonIsBitExactForEverySpecialValue) {
  CaseFile f{special_case(GetParam()), std::nullopt, {}, ""};
  f.failure = FailureRecord{"host", "cpu", "accuracy", "msg", "./gatecheck repro x --impl host", false, ""};
  f.note = "a note";
  const CaseFile g = case_from_json(case_to_json(f), "test");
  EXPECT_TRUE(g.c == f.c);  // compares raw bytes: -0, NaN payloads included
  ASSERT_TRUE(g.failure.has_value());
  EXPECT_EQ(g.failure->property, "accuracy");
  EXPECT_FALSE(g.failure->claimed);
  EXPECT_EQ(g.note, "a note");
  EXPECT_EQ(g.c.index_pattern, "identity");
}

TEST_P(CaseFileRoundTrip, SnapshotIsBitExact) {
  CaseFile f{special_case(GetParam()), std::nullopt, {}, ""};
  f.failure = FailureRecord{"plugin:x.so", "cpu", "row_invariance", "in flight", "", true, ""};
  const CaseFile g = case_from_snapshot(case_to_snapshot(f), "test");
  EXPECT_TRUE(g.c == f.c);
  ASSERT_TRUE(g.failure.has_value());
  EXPECT_EQ(g.failure->impl, "plugin:x.so");
}

INSTANTIATE_TEST_SUITE_P(AllDtypes, CaseFileRoundTrip, ::testing::Values(DType::f32, DType::f16, DType::bf16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

// rmsnorm_modulate's tensor named scale is an array of values, not a
// scale-tier spec (an object): its files round-trip in both formats.
TEST(CaseFile, RmsnormModulateFilesWithTheirScaleTensorRoundTrip) {
  const OpSchema& op = *find_op_schema("rmsnorm_modulate");
  for (DType t : {DType::bf16, DType::f16, DType::f32}) {
    const auto sp = specials(t);
    CaseFile f;
    f.c = make_case(op, t, 3, int64_t(sp.size()), 2);
    f.c.index = {1, 0, 1};
    for (HostTensor& x : f.c.inputs)
      for (int64_t i = 0; i < x.numel(); ++i) x.set_bits(i, sp[size_t((i * 5 + x.rows) % int64_t(sp.size()))]);
    f.c.scalars = {1e-5};
    const std::string text = case_to_json(f);
    ASSERT_NE(text.find("\"scale\": ["), std::string::npos) << text.substr(0, 200);
    const CaseFile g = case_from_json(text, "rms.json");
    EXPECT_FALSE(g.scale.has_value());
    EXPECT_TRUE(g.c == f.c) << dtype_name(t);
    EXPECT_TRUE(case_from_snapshot(case_to_snapshot(f), "rms.snap").c == f.c) << dtype_name(t);
  }
  // A scale spec (an object) makes it a scale file of rmsnorm_modulate: an
  // empty one is refused, naming the spec's first missing field.
  nlohmann::json j = nlohmann::json::parse(case_to_json(CaseFile{make_case(op, DType::f32, 1, 1, 1), std::nullopt, std::nullopt, ""}));
  j["scale"] = nlohmann::json::object();
  try {
    case_from_json(j.dump(), "s.json");
    ADD_FAILURE() << "an empty scale spec of rmsnorm_modulate was read";
  } catch (const CaseFileError& e) {
    EXPECT_NE(std::string(e.what()).find("s.json: missing field 'rows'"), std::string::npos) << e.what();
  }
}

TEST(CaseFile, RoundTripDetectsASingleFlippedBit) {
  // The comparison the round-trip tests rely on must see -0 vs +0.
  Case a = special_case(DType::bf16);
  a.input("res").set_bits(0, 0x0000);
  Case b = a;
  b.input("res").set_bits(0, 0x8000);
  EXPECT_FALSE(a == b);
}

// An op whose tensor is named "scale" (rmsnorm_modulate's) is a case with
// values, not a scale-tier case, and reads back bit for bit.
TEST(CaseFile, ATensorNamedScaleRoundTrips) {
  Case c = make_case(rmsnorm_modulate_schema(), DType::bf16, 2, 3, 2);
  c.index = {1, 0};
  HostTensor& scale = c.input("scale");
  for (int64_t i = 0; i < scale.numel(); ++i) scale.set_bits(i, 0x3f80u + uint32_t(i));
  const CaseFile f{c, std::nullopt, {}, ""};
  const CaseFile g = case_from_json(case_to_json(f), "t");
  EXPECT_FALSE(g.scale.has_value());
  EXPECT_TRUE(g.c == c);
}

TEST(CaseFile, EmptyProblemsRoundTrip) {
  for (auto shape : {std::array<int64_t, 3>{0, 4, 0}, {3, 0, 2}, {0, 0, 0}}) {
    CaseFile f{make_case(DType::f16, shape[0], shape[1], shape[2]), std::nullopt, {}, ""};
    EXPECT_TRUE(case_from_json(case_to_json(f), "t").c == f.c);
  }
}

TEST(CaseFile, GeneratorSpecReplaysIdentically) {
  CaseSpec s;
  s.dtype = DType::bf16;
  s.rows = 4097;
  s.dim = 16;
  s.gates = 9;
  s.index_pattern = "uniform";
  s.value_class = "normal";
  s.plan_kind = "partition";
  s.index_seed = 1;
  s.value_seed = 2;
  s.plan_seed = 3;
  CaseFile f{make_case_from_spec(s), s, {}, ""};
  f.c.plan.reset();  // the plan is regenerated from plan_kind/plan_seed, not stored
  const std::string text = case_to_json(f);
  EXPECT_LT(text.size(), 1000u);  // the spec, not the values
  const CaseFile g = case_from_json(text, "t");
  Case want = make_case_from_spec(s);
  EXPECT_TRUE(g.c == want);
  s.value_seed = 4;
  EXPECT_FALSE(make_case_from_spec(s) == want);
}

void expect_error(const std::string& text, const std::string& needle) {
  try {
    case_from_json(text, "bad.json");
    ADD_FAILURE() << "accepted: " << text.substr(0, 200);
  } catch (const CaseFileError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("bad.json"), std::string::npos) << m;
    EXPECT_NE(m.find(needle), std::string::npos) << "message '" << m << "' lacks '" << needle << "'";
  }
}

TEST(CaseFile, CorruptFilesGiveClearErrors) {
  CaseFile f{special_case(DType::bf16), std::nullopt, {}, ""};
  const std::string good = case_to_json(f);
  const nlohmann::json j = nlohmann::json::parse(good);
  auto edited = [&](auto&& edit) {
    nlohmann::json k = j;
    edit(k);
    return k.dump();
  };
  expect_error(good.substr(0, good.size() / 2), "not valid JSON");
  expect_error("[]", "JSON object");
  expect_error(edited([](auto& k) { k["version"] = 3; }), "version 3 is not supported");
  expect_error(edited([](auto& k) { k["version"] = 2; }), "missing field 'op'");  // version 2 names its op
  expect_error(edited([](auto& k) {
                 k["version"] = 2;
                 k["op"] = "gate_resid";
               }),
               "'op' is unknown op 'gate_resid' (gate_residual");
  // version 1 is gate_residual's: another op named in it is an error that says so, not a missing tensor
  expect_error(edited([](auto& k) { k["op"] = "rmsnorm_modulate"; }),
               "'op' is \"rmsnorm_modulate\" in a version-1 file, which holds a gate_residual case (a file of another op "
               "is version 2)");
  expect_error(edited([](auto& k) { k["op"] = 7; }), "'op' is 7 in a version-1 file");
  EXPECT_NO_THROW(case_from_json(edited([](auto& k) { k["op"] = "gate_residual"; }), "ok.json"));
  expect_error(edited([](auto& k) { k["format"] = "other"; }), "format");
  expect_error(edited([](auto& k) { k["dtype"] = "int8"; }), "dtype 'int8'");
  expect_error(edited([](auto& k) { k["res"][0] = "zz00" + k["res"][0].template get<std::string>().substr(4); }),
               "res[0] element 0");
  expect_error(edited([](auto& k) { k["y"][1] = k["y"][1].template get<std::string>().substr(5); }), "y[1]");
  expect_error(edited([](auto& k) { k["rows"] = 99999999999LL; }), "limit");
  expect_error(edited([](auto& k) { k["rows"] = -1; }), "'rows' = -1 is negative");
  expect_error(edited([](auto& k) { k["index"].erase(0); }), "'index' has 2 entries");
  expect_error(edited([](auto& k) { k["plan"]["batches"][1][0] = 7; }), "plan batch 1 names row 7");
  expect_error(edited([](auto& k) { k.erase("grad_out"); }), "grad_out");
  expect_error("{\"format\": \"gatecheck-case\", \"version\": 1}", "missing field 'dtype'");
}

// Integer fields take JSON integers in their type's range, and nothing else.
// A cast from 5.5e107 (found by fuzz_corpus_file under UBSan in the CI smoke
// run) was undefined behaviour; 2^64 - 1 or 2^32 + 1 would have wrapped.
TEST(CaseFile, NumbersOutsideAnIntegerFieldsTypeAreErrors) {
  CaseFile f{special_case(DType::bf16), std::nullopt, {}, ""};
  const nlohmann::json j = nlohmann::json::parse(case_to_json(f));
  auto edited = [&](auto&& edit) {
    nlohmann::json k = j;
    edit(k);
    return k.dump();
  };
  expect_error(edited([](auto& k) { k["index"][0] = 5.55556e+107; }), "'index' holds 5.55556e+107");
  expect_error(edited([](auto& k) { k["index"][1] = 0.5; }), "'index' holds 0.5");
  expect_error(edited([](auto& k) { k["index"][0] = 18446744073709551615ULL; }), "'index' holds 18446744073709551615");
  expect_error(edited([](auto& k) { k["rows"] = 1e300; }), "'rows' holds 1e+300");
  expect_error(edited([](auto& k) { k["version"] = 4294967297LL; }), "'version' holds 4294967297");
  expect_error(edited([](auto& k) { k["plan"]["batches"][0][0] = -1e30; }), "'batches' holds -1e+30");
  // An integer written with an exponent is still a float to JSON: refused too.
  expect_error(edited([](auto& k) { k["gates"] = 2.0; }), "'gates' holds 2.0");
}

// A snapshot is bytes; a case's names in it must still be text the JSON
// writer keeps (fuzz_corpus_file found a plan kind with a stray 0xa4 byte:
// JSON replaced it and the case changed in the round trip).
TEST(CaseFile, SnapshotNamesMustBeValidUtf8) {
  for (const char* what : {"plan kind", "index pattern", "value class"}) {
    CaseFile f{special_case(DType::f32), std::nullopt, {}, ""};
    const std::string bad = std::string("x\xa4y", 3);
    if (std::string(what) == "plan kind") f.c.plan = BatchPlan{bad, {{0}}, 0};
    if (std::string(what) == "index pattern") f.c.index_pattern = bad;
    if (std::string(what) == "value class") f.c.value_class = bad;
    try {
      case_from_snapshot(case_to_snapshot(f), "s.bin");
      ADD_FAILURE() << what << " with an invalid byte accepted";
    } catch (const CaseFileError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("has a ") + what + " that is not valid UTF-8"),
                std::string::npos)
          << e.what();
    }
  }
  CaseFile ok{special_case(DType::f32), std::nullopt, {}, ""};
  ok.c.index_pattern = "uniform \xc3\xa9";  // valid UTF-8 (e with an acute accent) is kept
  EXPECT_EQ(case_from_snapshot(case_to_snapshot(ok), "s.bin").c.index_pattern, ok.c.index_pattern);
  EXPECT_TRUE(is_valid_utf8("plain"));
  EXPECT_FALSE(is_valid_utf8(std::string("\xff", 1)));
}

// Rows and gates are bounded even where dim 0 makes every tensor empty: each
// is still an entry of the JSON file.
TEST(CaseFile, RowAndGateCountsAreBounded) {
  CaseFile f{special_case(DType::bf16), std::nullopt, {}, ""};
  const nlohmann::json j = nlohmann::json::parse(case_to_json(f));
  nlohmann::json k = j;
  k["dim"] = 0;
  k["gates"] = kMaxCaseRows + 1;
  expect_error(k.dump(), "exceeds the limit of 1048576 rows and gates");
  for (const bool gates : {false, true}) {
    CaseFile e{make_case(DType::bf16, gates ? 0 : kMaxCaseRows + 1, 0, gates ? kMaxCaseRows + 1 : 0), std::nullopt, {},
               ""};
    try {
      case_from_snapshot(case_to_snapshot(e), "s.bin");
      ADD_FAILURE() << (gates ? "gates" : "rows") << " past the limit accepted";
    } catch (const CaseFileError& x) {
      EXPECT_NE(std::string(x.what()).find(gates ? "bad gate count (1048577)" : "bad row count (1048577)"),
                std::string::npos)
          << x.what();
    }
  }
  CaseFile at{make_case(DType::bf16, 0, 0, kMaxCaseRows), std::nullopt, {}, ""};  // the limit itself is read
  EXPECT_EQ(case_from_snapshot(case_to_snapshot(at), "s.bin").c.gates, kMaxCaseRows);
}

// Both formats refuse a case whose rows have no gate to index (found by
// fuzz_corpus_file: a snapshot with gates = 0 and rows = 3 was read, and its
// JSON could not be).
TEST(CaseFile, BothFormatsRefuseRowsWithoutGates) {
  CaseFile f{make_case(DType::f32, 3, 0, 0), std::nullopt, {}, ""};
  try {
    case_from_snapshot(case_to_snapshot(f), "s.bin");
    ADD_FAILURE() << "a snapshot with gates = 0 and rows = 3 was accepted";
  } catch (const CaseFileError& e) {
    EXPECT_NE(std::string(e.what()).find("s.bin: snapshot holds a case: gates = 0 with rows = 3 > 0: every row needs a gate"), std::string::npos)
        << e.what();
  }
  expect_error(case_to_json(f), "gates = 0 with rows = 3");
  CaseFile empty{make_case(DType::f32, 0, 4, 0), std::nullopt, {}, ""};  // no rows: no gate needed
  EXPECT_EQ(case_from_snapshot(case_to_snapshot(empty), "s.bin").c.rows, 0);
  EXPECT_EQ(case_from_json(case_to_json(empty), "e.json").c.dim, 4);
}

TEST(CaseFile, TruncatedSnapshotsGiveClearErrors) {
  CaseFile f{special_case(DType::f32), std::nullopt, {}, ""};
  const std::string snap = case_to_snapshot(f);
  for (size_t cut = 0; cut < snap.size(); ++cut) {
    EXPECT_THROW(case_from_snapshot(snap.substr(0, cut), "s"), CaseFileError) << "cut at " << cut;
  }
}

// A file cut short before a snapshot's header is named as a broken snapshot, not as bad JSON
// (every cut of the header, and a snapshot's name on bytes that are not JSON); a .snapshot that
// holds JSON (an in-flight scale case) and an empty file say what they are.
TEST(CaseFile, ReadCaseFileNamesABrokenSnapshotAsOne) {
  CaseFile f{special_case(DType::f32), std::nullopt, {}, ""};
  const std::string snap = case_to_snapshot(f), dir = ::testing::TempDir();
  auto message = [&](const std::string& name, const std::string& bytes) {
    const std::string path = dir + "/" + name;
    std::ofstream(path, std::ios::binary) << bytes;
    std::string m = "(read)";
    try {
      read_case_file(path);
    } catch (const CaseFileError& e) {
      m = e.what();
    }
    std::remove(path.c_str());
    return m;
  };
  for (size_t cut = 1; cut < sizeof kSnapshotMagic; ++cut)
    EXPECT_NE(message("cut.json", snap.substr(0, cut)).find("not a gatecheck snapshot (truncated or corrupt"),
              std::string::npos) << "cut at " << cut;
  EXPECT_NE(message("w.snapshot", "\x01\x02 garbage").find("w.snapshot: not a gatecheck snapshot"), std::string::npos);
  EXPECT_NE(message("e.snapshot", "").find("e.snapshot: the file is empty"), std::string::npos);
  EXPECT_NE(message("j.snapshot", "{\"format\": 1").find("not valid JSON"), std::string::npos);
  EXPECT_NE(message("b.json", "\x01\x02 garbage").find("not valid JSON"), std::string::npos);
  EXPECT_EQ(message("whole.snapshot", snap), "(read)");
}

TEST(CaseFile, WriteIsAtomicAndReadable) {
  const std::string path = ::testing::TempDir() + "/gc_case_test.json";
  CaseFile f{special_case(DType::f16), std::nullopt, {}, ""};
  write_case_file(path, f);
  EXPECT_TRUE(read_case_file(path).c == f.c);
  std::ifstream tmp(path + ".tmp");
  EXPECT_FALSE(tmp.good());
  EXPECT_THROW(read_case_file(path + ".missing"), CaseFileError);
  std::remove(path.c_str());
}

TEST(CaseFile, DigestSeesEveryBit) {
  Case a = special_case(DType::bf16), b = a;
  b.input("grad_out").set_bits(5, b.input("grad_out").bits(5) ^ 1);
  EXPECT_NE(case_digest(a), case_digest(b));
  EXPECT_EQ(case_digest(a), case_digest(special_case(DType::bf16)));
}

}  // namespace
}  // namespace gatecheck
