// rmsnorm_modulate's reproducible mode (host-repro): out and dx are the host
// twin's bits; dweight, dshift and dscale are the same for every split of the
// batch (2 to 64 parts, contiguous, strided, random) and every combine
// order; accurate against the oracle; and the comparator fails an exchange
// that loses a part.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "case/case_spec.h"
#include "harness/run/runner.h"
#include "harness/run/split_runner.h"
#include "kernels/host/rmsnorm_modulate_repro_host.h"
#include "kernels/rmsnorm_modulate.h"
#include "properties/checks/properties.h"

namespace gatecheck {
namespace {

const OpSchema& op() { return rmsnorm_modulate_schema(); }
const char* const kGrads[3] = {"dweight", "dshift", "dscale"};

Case rms_case(DType t, int64_t rows, int64_t dim, int64_t gates, const char* values, uint64_t seed) {
  Case c = make_case(op(), t, rows, dim, gates);
  c.index = make_index("uniform", rows, gates, seed);
  fill_values(&c, values, seed);
  return c;
}

// k parts of rows [0, n): contiguous, strided (row r in part r mod k) or random.
std::vector<std::vector<int64_t>> split_rows(const std::string& how, int64_t n, int k, uint64_t seed) {
  std::vector<std::vector<int64_t>> parts(static_cast<size_t>(k));
  std::mt19937_64 rng(seed);
  for (int64_t r = 0; r < n; ++r) {
    const size_t p = how == "contiguous" ? size_t(r * k / n) : how == "strided" ? size_t(r % k) : size_t(rng() % k);
    parts[p].push_back(r);
  }
  return parts;
}

TEST(RmsnormRepro, OutAndDxAreTheTwinsBits) {
  const Implementation host = make_implementation("host", Device::cpu, op());
  const Implementation repro = make_implementation("host-repro", Device::cpu, op());
  for (DType t : {DType::bf16, DType::f16, DType::f32})
    for (const char* values : {"normal", "order_sensitive", "mixed_magnitude", "subnormal"})
      for (uint64_t seed = 1; seed <= 3; ++seed) {
        const Case c = rms_case(t, 70, 37 + int64_t(seed) * 40, 3, values, seed);
        const RunResult a = run_case(host, c), b = run_case(repro, c);
        ASSERT_TRUE(a.status.ok()) << a.status.message;
        ASSERT_TRUE(b.status.ok()) << b.status.message;
        for (const char* name : {"out", "dx"})
          EXPECT_TRUE(a.outputs[name] == b.outputs[name]) << name << " on " << describe(c);
      }
}

// The full batch's backward against every split's partials, combined in rank
// order, in reverse and shuffled: the same bits, each time.
TEST(RmsnormRepro, ParameterGradientsAreTheSameForEverySplitAndCombineOrder) {
  const Implementation repro = make_implementation("host-repro", Device::cpu, op());
  int compared = 0;
  for (DType t : {DType::bf16, DType::f16, DType::f32})
    for (const char* values : {"normal", "order_sensitive", "mixed_magnitude"}) {
      const uint64_t seed = uint64_t(t) * 7 + 3;
      const Case c = rms_case(t, 200, 24, 5, values, seed);
      const RunResult full = run_case(repro, c);
      ASSERT_TRUE(full.status.ok()) << full.status.message;
      for (int k : {2, 3, 7, 16, 64})
        for (const char* how : {"contiguous", "strided", "random"}) {
          const auto parts = split_rows(how, c.rows, k, seed + uint64_t(k));
          std::vector<std::vector<uint64_t>> states(parts.size());
          for (size_t i = 0; i < parts.size(); ++i)
            ASSERT_TRUE(exchange_partial(repro, sub_case(c, parts[i]), &states[i]).ok());
          std::vector<size_t> order(parts.size());
          std::iota(order.begin(), order.end(), size_t(0));
          for (int o = 0; o < 3; ++o) {
            if (o == 1) std::reverse(order.begin(), order.end());
            if (o == 2) std::shuffle(order.begin(), order.end(), std::mt19937_64(seed));
            std::vector<std::vector<uint64_t>> ordered;
            for (size_t i : order) ordered.push_back(states[i]);
            std::vector<uint64_t> total;
            ASSERT_TRUE(exchange_combine(repro, c, ordered, &total).ok());
            Outputs got = outputs_for(c);
            ASSERT_TRUE(exchange_finalize(repro, c, total, &got).ok());
            for (const char* g : kGrads) {
              EXPECT_TRUE(got[g] == full.outputs[g])
                  << g << ", " << how << " split into " << k << " parts, order " << o << ", " << describe(c);
              ++compared;
            }
          }
        }
    }
  EXPECT_EQ(compared, 3 * 3 * 5 * 3 * 3 * 3);
}

// Through the property: host-repro passes every split drawn; the host twin
// (the framework's fp32 sum of the parts) fails most of the same cases.
TEST(RmsnormRepro, SplitInvariancePassesWhereTheTwinsFails) {
  const Implementation repro = make_implementation("host-repro", Device::cpu, op());
  const Implementation host = make_implementation("host", Device::cpu, op());
  int host_failed = 0, checked = 0;
  for (DType t : {DType::bf16, DType::f16, DType::f32})
    for (const char* values : {"normal", "order_sensitive", "mixed_magnitude", "subnormal"})
      for (uint64_t seed = 1; seed <= 4; ++seed) {
        Case c = rms_case(t, 150, 16, 4, values, seed);
        c.plan = make_plan(split_plan_kinds()[seed % 3], c, seed * 7919);
        const Verdict v = check_property("split_invariance", repro, c);
        ASSERT_TRUE(v.passed) << describe(c) << ": " << v.message;
        EXPECT_GT(v.compared, 0);
        host_failed += !check_property("split_invariance", host, c).passed;
        ++checked;
      }
  EXPECT_GT(host_failed, checked / 2) << host_failed << " of " << checked;
}

TEST(RmsnormRepro, AccurateAgainstTheOracle) {
  const Implementation repro = make_implementation("host-repro", Device::cpu, op());
  for (DType t : {DType::bf16, DType::f16, DType::f32})
    for (const char* values : {"normal", "order_sensitive", "mixed_magnitude", "subnormal"})
      for (uint64_t seed = 1; seed <= 3; ++seed) {
        const Case c = rms_case(t, 120, 48, 3, values, seed);
        const Verdict v = check_property("accuracy", repro, c);
        EXPECT_TRUE(v.passed) << describe(c) << ": " << v.message;
      }
}

// The comparator can fail: an exchange whose combine loses the last part.
const gatecheck_split_exchange* real() { return rmsnorm_modulate_repro_host_exchange(); }
int lossy_combine(const gatecheck_problem* p, const uint64_t* const* s, int32_t n, uint64_t* out) {
  return real()->combine(p, s, n > 1 ? n - 1 : n, out);
}

TEST(RmsnormRepro, AnExchangeThatLosesAPartFails) {
  static gatecheck_split_exchange lossy = *real();
  lossy.combine = lossy_combine;
  Implementation impl = make_implementation("host-repro", Device::cpu, op());
  impl.exchange = &lossy;
  Case c = rms_case(DType::bf16, 40, 8, 2, "normal", 3);
  c.plan = make_plan("micro_batches", c, 3);
  const Verdict v = check_property("split_invariance", impl, c);
  ASSERT_FALSE(v.passed);
  EXPECT_NE(v.message.find("its declared exchange"), std::string::npos) << v.message;
  EXPECT_FALSE(v.failed_outputs.empty());
}

// Bad arguments to the exchange: a message naming them, no crash.
TEST(RmsnormRepro, ExchangeRejectsBadArguments) {
  const gatecheck_split_exchange* ex = real();
  gatecheck_problem p{};
  p.rows = 4;
  p.dim = 3;
  p.gates = 2;
  EXPECT_NE(ex->combine(nullptr, nullptr, 0, nullptr), 0);
  uint64_t out[4];
  EXPECT_NE(ex->combine(&p, nullptr, 2, out), 0);
  EXPECT_NE(std::string(ex->last_error()).find("states or out is null"), std::string::npos) << ex->last_error();
  EXPECT_NE(ex->partial(nullptr, out), 0);
  EXPECT_EQ(ex->state_words(&p), (3 + 2 * 2 * 3) * 4);
}

}  // namespace
}  // namespace gatecheck
