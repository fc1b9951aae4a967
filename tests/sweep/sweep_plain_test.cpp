// The plain part's comparison (sweep_plain.h) without any library: the plain
// case zeroes the modulation (shift -0, scale 0), the comparator counts
// every element whose bits differ (one ulp, a zero's sign) and must fail on
// them, the host twin's ordinary forward call on the plain case gives the
// plain part bit for bit on data where it is exact, and the sweep writes the
// operator report's field from whatever reference it is given: true, false
// with the count, or null with the reason.
#include <gtest/gtest.h>

#include <iostream>

#include "plain_exact_case.h"
#include "properties/catalog/contract.h"
#include "sweep/sweep.h"
#include "sweep/sweep_operator_report.h"

namespace gatecheck {
namespace {

using nlohmann::json;
using plain_test::exact_case;
using plain_test::exact_plain;

TEST(SweepPlain, ThePlainCaseSetsShiftToMinusZeroAndScaleToZero) {
  for (DType t : {DType::f32, DType::f16, DType::bf16}) {
    const Case c = exact_case(t, 5, 37, 1);
    const Case p = plain_case(c);
    const HostTensor &shift = p.input("shift"), &scale = p.input("scale");
    for (int64_t i = 0; i < shift.numel(); ++i) {
      ASSERT_TRUE(shift.value(i) == 0 && std::signbit(shift.value(i))) << dtype_name(t) << " shift " << i;
      ASSERT_EQ(scale.bits(i), 0u) << dtype_name(t) << " scale " << i;
    }
    EXPECT_EQ(p.input("x"), c.input("x"));
    EXPECT_EQ(p.input("w"), c.input("w"));
    EXPECT_EQ(p.index, c.index);
    EXPECT_EQ(p.scalars, c.scalars);
  }
}

// Each op's plain part names its own tensors and scalars, which it sets and
// passes to its library op (rmsnorm_modulate has one; gate_residual none).
TEST(SweepPlain, EveryPlainPartNamesItsOwnTensors) {
  int parts = 0;
  for (const OpSchema* op : op_schemas()) {
    const PlainPart& pp = op->plain;
    if (!pp.field) continue;
    ++parts;
    EXPECT_TRUE(pp.library_op && pp.library_name && pp.exact && *pp.exact) << op->name;
    for (const auto& [name, v] : pp.set) EXPECT_GE(op->float_input(name), 0) << op->name << " sets " << name;
    for (const char* name : pp.args) EXPECT_GE(op->float_input(name), 0) << op->name << " passes " << name;
    for (const char* name : pp.scalar_args) EXPECT_GE(op->scalar_index(name), 0) << op->name << " passes " << name;
    ASSERT_GE(op->output_index(pp.output ? pp.output : ""), 0) << op->name;
    EXPECT_EQ(op->outputs[size_t(op->output_index(pp.output))].pass, Pass::forward) << op->name;
  }
  EXPECT_GE(parts, 1);
  EXPECT_EQ(std::string(rmsnorm_modulate_schema().plain.field), "plain_bitwise_vs_nn_rmsnorm");
}

TEST(SweepPlain, TheComparatorCountsEveryElementWhoseBitsDiffer) {
  const HostTensor want = exact_plain(exact_case(DType::bf16, 4, 9, 2));
  PlainAt same = compare_plain(want, want);
  EXPECT_EQ(same.differ, 0);
  EXPECT_EQ(same.elements, 36);
  // One ulp off at [2, 5]: one element, found where it is.
  HostTensor got = want;
  got.set_bits(2 * 9 + 5, got.bits(2 * 9 + 5) ^ 1u);
  const PlainAt one = compare_plain(got, want);
  EXPECT_EQ(one.differ, 1);
  EXPECT_EQ(one.at_row, 2);
  EXPECT_EQ(one.at_col, 5);
  EXPECT_EQ(one.bits, got.bits(2 * 9 + 5));
  EXPECT_EQ(one.want_bits, want.bits(2 * 9 + 5));
  EXPECT_EQ(one.why, "1 ulp apart");
  // A zero's sign is a difference; a NaN's payload is not (see sweep_plain.h).
  HostTensor zeros(DType::bf16, 1, 3), signed_zeros = zeros;
  signed_zeros.set_bits(1, 0x8000);
  EXPECT_EQ(compare_plain(signed_zeros, zeros).differ, 1);
  HostTensor nan_a = zeros, nan_b = zeros;
  nan_a.set_bits(0, 0x7fc0);
  nan_b.set_bits(0, 0xffc1);
  EXPECT_EQ(compare_plain(nan_a, nan_b).differ, 0);
  EXPECT_EQ(compare_plain(nan_a, zeros).differ, 1);
  // Another shape is every element differing.
  EXPECT_GT(compare_plain(HostTensor(DType::bf16, 1, 2), zeros).differ, 0);
}

TEST(SweepPlain, TheOrdinaryForwardCallOnThePlainCaseIsThePlainPart) {
  const Subject host = make_subject("host", Device::cpu, rmsnorm_modulate_schema());
  for (DType t : {DType::f32, DType::f16, DType::bf16})
    for (int64_t dim : {1, 37, 1031}) {
      const Case c = exact_case(t, 6, dim, uint64_t(dim));
      const HostTensor want = exact_plain(c);
      const PlainAt a = compare_plain(plain_output(host, plain_case(c)), want);
      EXPECT_EQ(a.differ, 0) << dtype_name(t) << " dim " << dim << ": first [" << a.at_row << ", " << a.at_col
                             << "] " << a.why;
      // The modulated call is not the plain part: the path must zero it.
      EXPECT_GT(compare_plain(plain_output(host, c), want).differ, 0) << dtype_name(t) << " dim " << dim;
    }
}

TEST(SweepPlain, APlusZeroShiftWouldTurnTheMinusZerosOfNIntoPlusZeros) {
  const Subject host = make_subject("host", Device::cpu, rmsnorm_modulate_schema());
  const Case c = exact_case(DType::bf16, 6, 37, 5);
  const HostTensor want = exact_plain(c);
  int64_t minus_zeros = 0;
  for (int64_t i = 0; i < want.numel(); ++i) minus_zeros += want.bits(i) == 0x8000;
  ASSERT_GT(minus_zeros, 0);
  Case p = plain_case(c);
  HostTensor& shift = p.input("shift");
  for (int64_t i = 0; i < shift.numel(); ++i) shift.set_bits(i, 0);
  const PlainAt a = compare_plain(plain_output(host, p), want);
  EXPECT_EQ(a.differ, minus_zeros);
  EXPECT_EQ(a.why, "+0 vs -0");
}

// A sweep of the host twin on a tiny grid, with the reference given.
SweepImplResult swept(const PlainReferenceFn& ref) {
  const OpSchema& op = rmsnorm_modulate_schema();
  SweepGrid g = quick_grid(op);
  g.dim = g.accuracy_dim = 16;
  g.seeds = {3};
  g.full_batches = {4};
  g.big_batch = 8;
  g.sub_batch_sizes = {1};
  g.sub_batch_seeds = 1;
  g.accuracy_rows = {5, 9};
  g.reps = 0;
  SweepOptions opt;
  opt.plain_reference = ref;
  const SweepRun run = run_sweep({make_subject("host", Device::cpu, op)}, {}, g, opt);
  EXPECT_EQ(run.impls.size(), 1u);
  EXPECT_EQ(run.impls[0].error, "");
  return run.impls[0];
}

TEST(SweepPlain, TheSweepWritesTheFieldFromItsReference) {
  const OpSchema& op = rmsnorm_modulate_schema();
  const std::string f = op.plain.field;
  const Subject host = make_subject("host", Device::cpu, op);
  // The host twin's own plain output as the library's: true at each size.
  auto itself = [&](const Case& p, Device) { return PlainReference{plain_output(host, p), "the host twin", ""}; };
  json r = operator_report_json(swept(itself), op);
  EXPECT_EQ(r[f], true) << r.dump(1);
  ASSERT_EQ(r[f + "_by_size"].size(), 2u);
  EXPECT_EQ(r[f + "_by_size"][1]["rows"], 9);
  EXPECT_EQ(r[f + "_by_size"][1]["elements"], 9 * 16);
  EXPECT_EQ(r[f + "_by_size"][1]["differ"], 0);
  EXPECT_NE(r[f + "_note"].get<std::string>().find("with shift = -0, scale = 0 (exactly the plain part then), "
                                                   "against the host twin"),
            std::string::npos)
      << r[f + "_note"];
  // One bit off at the larger size: false, with the count and the element.
  auto one_off = [&](const Case& p, Device) {
    PlainReference ref{plain_output(host, p), "the host twin, one bit off", ""};
    if (p.rows == 9) ref.out.set_bits(3 * 16 + 7, ref.out.bits(3 * 16 + 7) ^ 1u);
    return ref;
  };
  r = operator_report_json(swept(one_off), op);
  EXPECT_EQ(r[f], false) << r.dump(1);
  EXPECT_EQ(r[f + "_by_size"][0]["differ"], 0);
  EXPECT_EQ(r[f + "_by_size"][1]["differ"], 1);
  EXPECT_EQ(r[f + "_by_size"][1]["first_differ"]["row"], 3);
  EXPECT_EQ(r[f + "_by_size"][1]["first_differ"]["col"], 7);
  // No reference: null, with the reason, and no counts.
  auto none = [](const Case&, Device) { return PlainReference{{}, "", "no library here"}; };
  r = operator_report_json(swept(none), op);
  EXPECT_TRUE(r[f].is_null());
  EXPECT_EQ(r[f + "_note"], "no library here");
  EXPECT_TRUE(r[f + "_by_size"][0]["differ"].is_null());
}

// The default reference is this build's LibTorch: where it has no rms_norm
// (LibTorch 1.13), the field is null and says so; where it has, a verdict.
TEST(SweepPlain, TheDefaultReferenceIsThisLibTorchsOrItsAbsence) {
  const OpSchema& op = rmsnorm_modulate_schema();
  const std::string f = op.plain.field;
  const PlainReference ref = libtorch_plain_reference(plain_case(exact_case(DType::bf16, 2, 8, 1)), Device::cpu);
  const json r = operator_report_json(swept(SweepOptions{}.plain_reference), op);
  if (ref.unavailable.empty()) {
    EXPECT_TRUE(r[f].is_boolean()) << r.dump(1);
  } else {
    EXPECT_TRUE(r[f].is_null()) << r.dump(1);
    EXPECT_EQ(r[f + "_note"], ref.unavailable);
    std::cout << "this build's reference: " << ref.unavailable << "\n";
  }
}

}  // namespace
}  // namespace gatecheck
