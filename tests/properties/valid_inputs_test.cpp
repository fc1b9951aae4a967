// Contracts that narrow the valid inputs (properties/valid_inputs.h) and the
// text of a contract (Contract::parse reads what describe() writes): the
// generators draw only valid inputs, the shrinkers never leave them,
// check_property refuses a case outside them, and error_inputs builds its bad
// inputs from valid ones.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "broken_impls.h"
#include "kernels/host/gate_residual_host.h"
#include "properties/engine/check_engine.h"
#include "properties/generate/generation_limits.h"
#include "properties/shrink/shrink.h"

namespace gatecheck::testing {
namespace {

std::string parse_error(const std::string& text) {
  try {
    Contract::parse(text, "test");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ContractText, ParseReadsWhatDescribeWrites) {
  for (Device d : {Device::cpu, Device::cuda}) {
    Implementation eager;
    eager.name = "torch-eager";
    eager.device = d;
    Contract k = known_contract(eager);
    k.valid = ValidInputs::parse("rows>=1,dim>=2,gates<=64", "test");
    const Contract back = Contract::parse(k.describe());
    EXPECT_EQ(back.describe(), k.describe());
    for (const auto& p : all_properties())
      for (const char* o : {"", "out", "grad_res", "grad_y", "grad_gate"})
        for (DType t : {DType::bf16, DType::f16, DType::f32})
          EXPECT_EQ(back.claims_for(p, o, t), k.claims_for(p, o, t)) << k.describe() << " " << p << ":" << o;
  }
}

TEST(ContractText, AContractNamingNoPropertyClaimsTheDefaultSet) {
  const Contract c = Contract::parse("valid rows>=1,dim>=1");
  EXPECT_EQ(c.claims, default_properties());
  EXPECT_EQ(c.valid.min_rows, 1);
  EXPECT_EQ(c.valid.min_dim, 1);
  EXPECT_EQ(c.describe(), "default set; valid rows>=1,dim>=1");
  const Contract d = Contract::parse("accuracy,dim>=3");  // bounds may stand in the list
  EXPECT_EQ(d.claims, std::vector<std::string>{"accuracy"});
  EXPECT_EQ(d.valid.min_dim, 3);
  const Contract e = Contract::parse("default set + eager_exact; not repeatable for bf16 (a reason, with a comma)");
  EXPECT_TRUE(e.claims_for("eager_exact", "", DType::f32));
  EXPECT_FALSE(e.claims_for("repeatable", "", DType::bf16));
  EXPECT_TRUE(e.claims_for("repeatable", "", DType::f16));
  EXPECT_EQ(e.exceptions.at(0).reason, "a reason, with a comma");
}

TEST(ContractText, EachBadPartIsNamed) {
  EXPECT_NE(parse_error("acuracy").find("test: unknown property 'acuracy'"), std::string::npos);
  EXPECT_NE(parse_error("default; not accuracy:grad_gate for bf17").find("unknown dtype 'bf17'"), std::string::npos);
  EXPECT_NE(parse_error("default; not accuracy (no end").find("unclosed '('"), std::string::npos);
  EXPECT_NE(parse_error("valid cols>=1").find("'cols>=1' bounds 'cols', which is not rows, dim or gates"),
            std::string::npos);
  EXPECT_NE(parse_error("valid rows>=2").find("at most rows>=1"), std::string::npos);
  EXPECT_NE(parse_error("valid dim>=5,dim<=4").find("dim>=5 and dim<=4 leave no valid dim"), std::string::npos);
  EXPECT_NE(parse_error("valid dim>=x").find("needs a whole number"), std::string::npos);
  EXPECT_NE(parse_error("valid rows=1").find("is not a bound such as rows>=1"), std::string::npos);
  // A claim lost to a stray comma is refused, not skipped; "+" still joins like ",".
  EXPECT_NE(parse_error("accuracy,,repeatable").find("an empty claim (two commas, or one at an end) in"),
            std::string::npos);
  EXPECT_NE(parse_error("accuracy,").find("an empty claim"), std::string::npos);
  EXPECT_NE(parse_error(", accuracy; not accuracy:out").find("an empty claim"), std::string::npos);
  EXPECT_EQ(parse_error("default set + eager_exact"), "(no error)");
}

TEST(ValidInputs, SaysWhyACaseIsOutside) {
  const ValidInputs v = ValidInputs::parse("rows>=1,dim>=1", "test");
  EXPECT_EQ(v.why_not(make_case(DType::f32, 0, 4, 1)),
            "rows = 0 is outside the contract's valid inputs (rows>=1,dim>=1)");
  EXPECT_TRUE(v.admits(make_case(DType::f32, 1, 1, 1)));
  EXPECT_FALSE(ValidInputs().narrowed());
}

Subject host_within(const std::string& valid) {
  Subject s = make_subject("host", Device::cpu);
  s.contract.valid = ValidInputs::parse(valid, "test");
  return s;
}

CheckOptions cases_of(const std::string& property, int64_t n) {
  CheckOptions o;
  o.properties = {property};
  o.seed = 3;
  o.seconds = 0;
  o.max_cases = n;
  o.limits.max_rows = 30;
  o.limits.max_dim = 12;
  o.limits.max_gates = 12;
  return o;
}

TEST(ValidInputs, TheEngineGeneratesOnlyValidInputs) {
  for (const char* valid : {"rows>=1,dim>=3,gates<=5", ""}) {
    int64_t outside = 0, seen = 0;
    CheckOptions o = cases_of("accuracy", 150);
    o.before_run = [&](const Subject&, const std::string&, const Case& c) {
      ++seen;
      outside += c.rows < 1 || c.dim < 3 || c.gates > 5;
    };
    const CheckReport r = run_check({host_within(valid)}, o);
    EXPECT_TRUE(r.results.at(0).passed);
    EXPECT_EQ(seen, 150);
    if (*valid) EXPECT_EQ(outside, 0) << "a case outside " << valid << " was generated";
    else EXPECT_GT(outside, 0) << "without the narrowing such cases are drawn (or this test proves nothing)";
  }
}

TEST(ValidInputs, TheShrinkersStayWithinThem) {
  // out_off_by_much fails on any case with an element: unnarrowed, both
  // shrinkers reach one column; with dim>=4 they must stop at four.
  Subject bad = broken(Bug::out_off_by_much);
  CheckOptions o = cases_of("accuracy", 20);
  const auto shrunk_dim = [&](const Subject& s) {
    const CheckReport r = run_check({s}, o);
    const auto& f = r.results.at(0).failure;
    EXPECT_TRUE(f.has_value());
    return f ? f->shrunk.dim : -1;
  };
  EXPECT_EQ(shrunk_dim(bad), 1);
  bad.contract.valid = ValidInputs::parse("dim>=4", "test");
  EXPECT_EQ(shrunk_dim(bad), 4);
  Case wide = make_case(DType::f32, 3, 9, 2);
  for (int64_t i = 0; i < wide.input("res").numel(); ++i) wide.input("res").set_value_rn(i, 1.0f);
  const ShrinkResult sr = shrink_case(bad, "accuracy", wide);
  EXPECT_GE(sr.minimal.dim, 4);
  EXPECT_GE(sr.steps, 1);
}

TEST(ValidInputs, CheckPropertyRefusesACaseOutsideThem) {
  try {
    check_property("accuracy", host_within("rows>=1"), make_case(DType::f32, 0, 2, 1));
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("rows = 0 is outside the contract's valid inputs (rows>=1)"),
              std::string::npos)
        << e.what();
  }
}

TEST(ValidInputs, LimitsThatLeaveNothingAreRefused) {
  GenLimits run;
  run.max_dim = 4;
  EXPECT_THROW(generation_limits(host_within("dim>=8"), run), std::invalid_argument);
  const GenLimits l = generation_limits(host_within("dim>=2,rows<=7"), run);
  EXPECT_EQ(l.min_dim, 2);
  EXPECT_EQ(l.max_rows, 7);
}

// host, but every problem with fewer than 12 columns is refused for that
// reason alone, as an op with a minimum width would.
thread_local bool refused_as_narrow = false;
const char* narrow_last_error() {
  return refused_as_narrow ? "this op needs 12 columns or more" : gate_residual_host_plugin()->last_error();
}
bool too_narrow(const gatecheck_problem* p) { return refused_as_narrow = p && p->dim >= 0 && p->dim < 12; }
int narrow_forward(const gatecheck_problem* p, const void* res, const void* gate, const int64_t* index, const void* y,
                   void* out) {
  if (too_narrow(p)) return 1;
  return gate_residual_host_plugin()->forward(p, res, gate, index, y, out);
}
int narrow_backward(const gatecheck_problem* p, const void* grad_out, const void* gate, const int64_t* index,
                    const void* y, void* grad_res, void* grad_gate, void* grad_y) {
  if (too_narrow(p)) return 1;
  return gate_residual_host_plugin()->backward(p, grad_out, gate, index, y, grad_res, grad_gate, grad_y);
}
TEST(ValidInputs, ErrorInputsBuildsItsBadInputsFromValidOnes) {
  static const gatecheck_plugin narrow_api = {1, "narrow", 1u << GATECHECK_CPU, narrow_forward, narrow_backward,
                                              narrow_last_error};
  Subject s = make_subject("host", Device::cpu);
  s.name = "narrow";
  s.api = &narrow_api;
  Case c = make_case(DType::f32, 5, 20, 3);
  c.index = {0, 1, 2, 1, 0};
  // Unnarrowed, the probes are cut to 8 columns, which this op refuses for
  // that reason: its message names no index, and error_inputs fails.
  const Verdict unnarrowed = check_property("error_inputs", s, c);
  EXPECT_FALSE(unnarrowed.passed);
  EXPECT_NE(unnarrowed.message.find("this op needs 12 columns or more"), std::string::npos) << unnarrowed.message;
  s.contract.valid = ValidInputs::parse("dim>=12", "test");
  const Verdict narrowed = check_property("error_inputs", s, c);
  EXPECT_TRUE(narrowed.passed) << narrowed.message;
}

}  // namespace
}  // namespace gatecheck::testing
