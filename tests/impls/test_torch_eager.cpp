// torch-eager (LibTorch's res + gate.index_select(0, idx) * y with autograd):
// its bitwise agreement with the eager rounding model where eager is exact,
// its documented grad_gate finding, empty problems, bad input and exceptions.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tests/gate_residual_test_names.h"
#include "bits_equal.h"
#include "grad_gate_accuracy.h"
#include "harness/isolate/isolate.h"
#include "harness/run/runner.h"
#include "kernels/gate_residual_math.h"
#include "kernels/host/gate_residual_host.h"
#include "kernels/torch/torch_eager.h"
#include "oracles/oracle.h"
#include "random_case.h"

namespace gatecheck {
namespace {

using test::bits_equal;
using test::random_case;

const Implementation& torch_cpu() {
  static const Implementation impl = make_implementation("torch-eager", Device::cpu);
  return impl;
}
const Implementation& host() {
  static const Implementation impl = make_implementation("host", Device::cpu);
  return impl;
}

const DType kDTypes[] = {DType::f32, DType::bf16, DType::f16};

struct Shape {
  int64_t rows, dim, gates;
  const char* why;
};
const Shape kShapes[] = {
    {1, 1, 1, "the smallest problem"},
    {7, 5, 3, "odd sizes, a tail of any vector width"},
    {300, 64, 9, "H3's 9 gates, every segment well under one 256-row tile"},
    {600, 16, 2, "segments of ~300 rows: two tiles in the host twin"},
};

int64_t longest_segment(const Case& c) {
  std::vector<int64_t> n(size_t(c.gates), 0);
  int64_t most = 0;
  for (int64_t k : c.index) most = std::max(most, ++n[size_t(k)]);
  return most;
}

void expect_clean(const RunResult& r, const std::string& what) {
  EXPECT_TRUE(r.status.ok()) << what << ": " << r.status.message;
  for (const auto& m : r.memory) ADD_FAILURE() << what << ": " << m.detail;
}

// out, grad_res and grad_y have one eager rounding each, which the host twin
// performs too: LibTorch must agree bit for bit in every dtype it supports.
// grad_gate agrees for f32 while each gate's rows fit one host tile: then both
// add the fp32 terms in row order from +0. Beyond a tile, or in bf16/f16 where
// eager accumulates in the dtype, it is not expected to match.
TEST(TorchEager, RoundedOutputsMatchTheHostTwinBitForBit) {
  uint64_t seed = 1;
  for (DType t : kDTypes) {
    for (const Shape& s : kShapes) {
      const Case c = random_case(t, s.rows, s.dim, s.gates, seed++);
      const std::string what = describe(c) + " (" + s.why + ")";
      const RunResult got = run_case(torch_cpu(), c);
      const RunResult want = run_case(host(), c);
      expect_clean(got, what);
      expect_clean(want, what);
      EXPECT_TRUE(bits_equal("out", got.outputs["out"], want.outputs["out"])) << what;
      EXPECT_TRUE(bits_equal("grad_res", got.outputs["grad_res"], want.outputs["grad_res"])) << what;
      EXPECT_TRUE(bits_equal("grad_y", got.outputs["grad_y"], want.outputs["grad_y"])) << what;
      if (t == DType::f32 && longest_segment(c) <= kGradGateTileRows) {
        EXPECT_TRUE(bits_equal("grad_gate", got.outputs["grad_gate"], want.outputs["grad_gate"])) << what;
      }
    }
  }
}

// ---- against the oracle's eager rounding model --------------------------------

// Whether this LibTorch's CPU grad_gate accumulates in dtype t (as the eager
// model does), read with the order-free probe in grad_gate_accuracy.h.
bool accumulates_in_dtype(DType t) {
  if (t == DType::f32) return true;
  return test::sum_of_4096_ones(torch_cpu(), t) == (t == DType::bf16 ? test::kSumInBf16 : test::kSumInF16);
}

// Signed zeros, infinities, NaN, subnormals and values whose product
// overflows, mixed into N(0,1) data, so NaN/Inf/-0 propagation is compared too.
Case special_case(DType t, int64_t rows, int64_t dim, int64_t gates, uint64_t seed) {
  Case c = random_case(t, rows, dim, gates, seed);
  const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-40f, -3e-8f, 6e4f, -3e38f, 1e30f};
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> pick(0, 9), which(0, 3);
  for (HostTensor* v : {&c.input("res"), &c.input("gate"), &c.input("y"), &c.input("grad_out")})
    for (int64_t i = 0; i < v->numel(); ++i)
      if (which(rng) == 0) v->set_value_rn(i, specials[pick(rng)]);
  c.value_class = "specials";
  return c;
}

// LibTorch 2.11's CPU grad_gate, as measured on the GPU machine: the bf16/f16
// terms g*y are rounded to the dtype (mul's backward makes a dtype tensor),
// then summed in fp32 (the 4096-ones probe gives 4096) in row order from +0,
// and rounded once. Rounding each term exceeds the oracle's bound on short
// segments (7x on 7 rows) and turns an overflowing term into Inf.
HostTensor grad_gate_of_rounded_terms(const Case& c) {
  std::vector<float> sum(size_t(c.gates * c.dim), 0.0f);
  for (int64_t r = 0; r < c.rows; ++r)
    for (int64_t j = 0; j < c.dim; ++j) {
      const int64_t i = r * c.dim + j;
      const float term = bits_to_float(c.dtype, float_to_bits_rn(c.dtype, c.input("grad_out").value(i) * c.input("y").value(i)));
      sum[size_t(c.index[size_t(r)] * c.dim + j)] += term;
    }
  HostTensor g(c.dtype, c.gates, c.dim);
  for (int64_t k = 0; k < g.numel(); ++k) g.set_value_rn(k, sum[size_t(k)]);
  return g;
}

void expect_bitwise(const char* name, const HostTensor& got, const HostTensor& want, const std::string& what) {
  // NaN payloads are LibTorch's own; grad_res is g passed through, bit for bit.
  const bool nan_any = std::string(name) != "grad_res";
  const Comparison cmp = compare_bitwise(name, got, want, nan_any);
  EXPECT_TRUE(cmp.ok()) << what << "\n" << cmp.summary();
}

// LibTorch eager is the eager rounding model, bit for bit, on long segments
// and special values too. grad_gate is the model's where this LibTorch
// accumulates in the dtype (f32 always; bf16/f16 with LibTorch 1.13), and the
// rounded-terms fp32 sum above where it does not (LibTorch 2.11 on the CPU).
TEST(TorchEager, MatchesTheEagerModelBitForBit) {
  uint64_t seed = 300;
  for (DType t : kDTypes) {
    const bool in_dtype = accumulates_in_dtype(t);
    for (const Shape& s : kShapes)
      for (const bool specials : {false, true}) {
        const Case c = specials ? special_case(t, s.rows, s.dim, s.gates, seed++)
                                : random_case(t, s.rows, s.dim, s.gates, seed++);
        const std::string what = describe(c) + " (" + s.why + ")";
        const RunResult got = run_case(torch_cpu(), c);
        expect_clean(got, what);
        const Outputs want = eager_model(c);
        for (const char* name : {"out", "grad_res", "grad_y"})
          expect_bitwise(name, got.outputs[name], want[name], what);
        expect_bitwise("grad_gate", got.outputs["grad_gate"],
                       in_dtype ? want["grad_gate"] : grad_gate_of_rounded_terms(c), what);
      }
  }
}

// The rounded-terms model is not the eager model: on 1.13 (here) the check
// above would fail with it, so the branch matters.
TEST(TorchEager, RoundedTermsModelDiffersFromTheEagerModel) {
  const Case c = random_case(DType::bf16, 600, 16, 2, 31);
  EXPECT_FALSE(compare_bitwise("grad_gate", grad_gate_of_rounded_terms(c), eager_model(c)["grad_gate"]).ok());
}

// The comparison above can fail: against the model of a case that differs in
// one y element, exactly that row's out and grad_gate differ.
TEST(TorchEager, EagerModelComparisonSeesOneChangedInput) {
  const Case c = random_case(DType::bf16, 40, 8, 3, 77);
  Case changed = c;
  changed.input("y").set_value_rn(5 * 8 + 2, c.input("y").value(5 * 8 + 2) * 2 + 1);
  const RunResult got = run_case(torch_cpu(), c);
  const Outputs want = eager_model(changed);
  const Comparison out = compare_bitwise("out", got.outputs["out"], want["out"]);
  EXPECT_EQ(out.failed, 1) << out.summary();
  EXPECT_EQ(out.first_bad, 5 * 8 + 2);
  EXPECT_TRUE(compare_bitwise("grad_y", got.outputs["grad_y"], want["grad_y"]).ok());
  EXPECT_FALSE(compare_bitwise("grad_gate", got.outputs["grad_gate"], want["grad_gate"]).ok());
}

TEST(TorchEager, EmptyProblemsAreValid) {
  const Shape empty[] = {{0, 5, 3, "no rows: grad_gate is all zeros"},
                         {4, 0, 2, "no columns"},
                         {0, 0, 0, "nothing at all"},
                         {0, 3, 0, "no rows and no gates"}};
  for (DType t : kDTypes)
    for (const Shape& s : empty) {
      const Case c = random_case(t, s.rows, s.dim, s.gates, 7);
      const RunResult got = run_case(torch_cpu(), c);
      const RunResult want = run_case(host(), c);
      const std::string what = describe(c) + " (" + s.why + ")";
      expect_clean(got, what);
      for (const char* name : kOutputNames)
        EXPECT_TRUE(bits_equal(name, got.outputs[name], want.outputs[name]))
            << what;
    }
}

// ---- bad input: the same error kind and message as the host twin, nothing written

struct Buffers {
  explicit Buffers(size_t n) : a(n, 0.5f), b(n, 0.5f), c(n, 0.5f), out(n, -7.0f), g2(n, -7.0f), g3(n, -7.0f) {}
  std::vector<float> a, b, c, out, g2, g3;
  bool outputs_untouched() const {
    for (const auto* v : {&out, &g2, &g3})
      for (float x : *v)
        if (x != -7.0f) return false;
    return true;
  }
};

struct BadInput {
  const char* what;
  gatecheck_problem p;
  std::vector<int64_t> index;
  bool null_first_tensor;
  ErrorKind kind;
};

std::vector<BadInput> bad_inputs() {
  const gatecheck_problem ok{3, 2, 2, GATECHECK_F32, GATECHECK_CPU, nullptr};
  auto with = [&](auto change) {
    gatecheck_problem p = ok;
    change(p);
    return p;
  };
  return {
      {"index too large", ok, {0, 2, 1}, false, ErrorKind::index_out_of_range},
      {"index negative", ok, {0, 1, -1}, false, ErrorKind::index_out_of_range},
      {"gates = 0 with rows", with([](auto& p) { p.gates = 0; }), {0, 0, 0}, false, ErrorKind::no_gates},
      {"null tensor", ok, {0, 1, 1}, true, ErrorKind::null_pointer},
      {"unknown dtype", with([](auto& p) { p.dtype = 7; }), {0, 1, 1}, false, ErrorKind::dtype_mismatch},
      {"cuda problem on the cpu build", with([](auto& p) { p.device = GATECHECK_CUDA; }), {0, 1, 1}, false,
       ErrorKind::unsupported_device},
      {"negative dim", with([](auto& p) { p.dim = -1; }), {0, 1, 1}, false, ErrorKind::shape_mismatch},
      {"rows*dim overflows", with([](auto& p) { p.dim = int64_t(1) << 62; }), {0, 1, 1}, false,
       ErrorKind::size_overflow},
  };
}

TEST(TorchEager, BadInputIsRejectedLikeTheHostTwinAndWritesNothing) {
  const gatecheck_plugin* torch = torch_eager_plugin(Device::cpu);
  const gatecheck_plugin* twin = gate_residual_host_plugin();
  for (const BadInput& b : bad_inputs()) {
    for (const bool fwd : {true, false}) {
      std::string msg[2];
      int rc[2];
      for (int which = 0; which < 2; ++which) {
        const gatecheck_plugin* api = which ? twin : torch;
        Buffers buf(16);
        const void* first = b.null_first_tensor ? nullptr : buf.a.data();
        rc[which] = fwd ? api->forward(&b.p, first, buf.b.data(), b.index.data(), buf.c.data(), buf.out.data())
                        : api->backward(&b.p, first, buf.b.data(), b.index.data(), buf.c.data(),
                                        buf.out.data(), buf.g2.data(), buf.g3.data());
        msg[which] = api->last_error();
        EXPECT_TRUE(buf.outputs_untouched()) << b.what << ": " << api->name << " wrote an output";
      }
      const char* op = fwd ? "forward" : "backward";
      EXPECT_EQ(rc[0], int(b.kind)) << b.what << " (" << op << "): " << msg[0];
      EXPECT_EQ(rc[0], rc[1]) << b.what << " (" << op << ")";
      EXPECT_EQ(msg[0], msg[1]) << b.what << " (" << op << ")";
    }
  }
}

TEST(TorchEager, IndexErrorNamesTheRowAndValue) {
  const gatecheck_problem p{3, 2, 2, GATECHECK_BF16, GATECHECK_CPU, nullptr};
  std::vector<uint16_t> t(6, 0x3f80);
  const int64_t index[] = {0, 1, 9};
  const gatecheck_plugin* api = torch_eager_plugin(Device::cpu);
  ASSERT_NE(api->forward(&p, t.data(), t.data(), index, t.data(), t.data()), 0);
  EXPECT_NE(std::string(api->last_error()).find("index[2] = 9 is out of range [0, 2)"), std::string::npos)
      << api->last_error();
}

// A LibTorch exception never crosses the C ABI: the gate-shaped gradient of
// 2^50 fp32 gates (4 PiB) cannot be allocated on any machine, and the failure
// comes back as an implementation error carrying LibTorch's message.
TEST(TorchEager, LibTorchExceptionsBecomeErrors) {
  const gatecheck_problem p{1, 1, int64_t(1) << 50, GATECHECK_F32, GATECHECK_CPU, nullptr};
  float g = 1, gate = 2, y = 3, grad_res = -7, grad_gate = -7, grad_y = -7;
  const int64_t index[] = {0};  // only gate row 0 is ever read
  const gatecheck_plugin* api = torch_eager_plugin(Device::cpu);
  const int rc = api->backward(&p, &g, &gate, index, &y, &grad_res, &grad_gate, &grad_y);
  EXPECT_EQ(rc, int(ErrorKind::implementation));
  const std::string msg = api->last_error();
  EXPECT_NE(msg.find("gate_residual_bwd: LibTorch: "), std::string::npos) << msg;
  EXPECT_EQ(grad_res, -7.0f);
  EXPECT_EQ(grad_y, -7.0f);
  EXPECT_EQ(grad_gate, -7.0f);
}

// ---- the documented finding: eager's grad_gate accumulates in the dtype -----
// LibTorch 1.13's CPU index_add (index_select's backward) adds each row's term
// into the bf16/f16 buffer, rounding every time; LibTorch 2.11's CPU kernel
// was measured to sum the (dtype-rounded) terms in fp32 instead (0.0023
// below, the host twin's error). So each test first reads which one this LibTorch does, with an
// order-free probe, requires the 1.13 behaviour from a 1.x LibTorch, and then
// requires the error that behaviour implies on a long segment.

using test::grad_gate_relative_error;
using test::sum_of_4096_ones;

// One gate, 4097 rows, dim 64, N(0,1) data with the gate x0.1. The prior art
// saw relative error 0.043 (CUDA, 9 gates, dim 5376); LibTorch 1.13 on the
// CPU here gives 0.099 on this one segment (0.059 in the prior art's shape).
// The host twin, which sums in fp32 and rounds once, is the control: the
// same measure must be small for it, so the measure tells the two apart.
TEST(TorchEagerFinding, Bf16GradGateIsInaccurateWhereItAccumulatesInBf16) {
  const double probe = sum_of_4096_ones(torch_cpu(), DType::bf16);
  std::printf("LibTorch %s cpu: 4096 bf16 ones sum to %g\n", libtorch_version().c_str(), probe);
  if (libtorch_version().rfind("1.", 0) == 0) {
    EXPECT_EQ(probe, test::kSumInBf16) << "LibTorch 1.x accumulates in bf16";
  }
  ASSERT_TRUE(probe == test::kSumInBf16 || probe == test::kSumInF32) << probe;

  const Case c = random_case(DType::bf16, 4097, 64, 1, 2024);
  const RunResult eager = run_case(torch_cpu(), c);
  const RunResult twin = run_case(host(), c);
  expect_clean(eager, describe(c));
  expect_clean(twin, describe(c));
  const double eager_err = grad_gate_relative_error(c, eager.outputs["grad_gate"]);
  const double twin_err = grad_gate_relative_error(c, twin.outputs["grad_gate"]);
  std::printf("bf16 grad_gate relative error at 4097 rows: torch-eager %.4f, host %.5f\n", eager_err, twin_err);
  EXPECT_LT(twin_err, 0.005) << "the host twin rounds once and must be accurate";
  if (probe == test::kSumInBf16) {
    EXPECT_GT(eager_err, 0.01) << "accumulating 4097 terms in bf16 must show";
  } else {
    EXPECT_LT(eager_err, 0.005) << "an fp32 accumulation must be as accurate as the host twin";
  }
}

TEST(TorchEagerFinding, F16GradGateLosesAccuracyWhereItAccumulatesInF16) {
  const double probe = sum_of_4096_ones(torch_cpu(), DType::f16);
  std::printf("LibTorch %s cpu: 4096 f16 ones sum to %g\n", libtorch_version().c_str(), probe);
  if (libtorch_version().rfind("1.", 0) == 0) {
    EXPECT_EQ(probe, test::kSumInF16) << "LibTorch 1.x accumulates in f16";
  }
  ASSERT_TRUE(probe == test::kSumInF16 || probe == test::kSumInF32) << probe;

  const Case c = random_case(DType::f16, 4097, 64, 1, 2024);
  const RunResult eager = run_case(torch_cpu(), c);
  const RunResult twin = run_case(host(), c);
  expect_clean(eager, describe(c));
  const double eager_err = grad_gate_relative_error(c, eager.outputs["grad_gate"]);
  const double twin_err = grad_gate_relative_error(c, twin.outputs["grad_gate"]);
  std::printf("f16 grad_gate relative error at 4097 rows: torch-eager %.5f, host %.6f\n", eager_err, twin_err);
  if (probe == test::kSumInF16) {
    EXPECT_GT(eager_err, 4 * twin_err);
  } else {
    EXPECT_LT(eager_err, 2 * twin_err + 1e-4);
  }
}

// --isolate runs torch-eager in a fresh process: a forked child would
// inherit a LibTorch whose thread pools (OpenMP, autograd) it does not have
// (a hang, then an autograd refusal, seen with LibTorch 2.11 on 16 cores).
// The parent here has run parallel work first (4097 rows go parallel).
TEST(TorchEager, RunsIsolatedAfterParallelWorkInTheParent) {
  const Case big = random_case(DType::bf16, 4097, 64, 3, 5);
  const RunResult parent = run_case(torch_cpu(), big);
  expect_clean(parent, describe(big));
  const RunResult child = run_case_isolated(torch_cpu(), big, {}, 60);
  expect_clean(child, "isolated " + describe(big));
  for (const char* name : kOutputNames)
    EXPECT_TRUE(bits_equal(name, child.outputs[name], parent.outputs[name]));
}

}  // namespace
}  // namespace gatecheck
