// rmsnorm_modulate's cuda-repro against host-repro: the same state words
// (every dtype and value class, special values included, on shapes that take
// element and vector loads, several row tiles and several chunks a row
// thread), the same dweight, dshift and dscale bits, and out and dx as the
// cuda kernels'; every partition with the device's combine in any order
// finalizes to the full batch's bits; the claims hold through the engine;
// bad arguments are rejected, saying what is wrong; and the cost beside the
// cuda backward, printed. Skips without a GPU.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "case/case_spec.h"
#include "harness/run/runner.h"
#include "harness/run/split_runner.h"
#include "kernels/binned_sum.h"
#include "kernels/cuda/rmsnorm_modulate_cuda.h"
#include "kernels/cuda/rmsnorm_modulate_repro_cuda.h"
#include "kernels/host/rmsnorm_modulate_repro_host.h"
#include "kernels/rmsnorm_modulate.h"
#include "properties/checks/properties.h"
#include "tests/cuda_cost.h"
#include "tests/gpu.h"

namespace gatecheck {
namespace {

const OpSchema& op() { return rmsnorm_modulate_schema(); }
const char* const kGrads[3] = {"dweight", "dshift", "dscale"};

Case rms_case(DType t, int64_t rows, int64_t dim, int64_t gates, const std::string& pattern, const std::string& values,
              uint64_t seed) {
  Case c = make_case(op(), t, rows, dim, gates);
  c.index = make_index(pattern, rows, gates, seed);
  fill_values(&c, values, seed);
  return c;
}

Implementation impl(const char* name, Device d) { return make_implementation(name, d, op()); }

std::vector<uint64_t> partial_of(const Implementation& i, const Case& c) {
  std::vector<uint64_t> s;
  const Status st = exchange_partial(i, c, &s);
  EXPECT_TRUE(st.ok()) << i.label() << ": " << st.message;
  return s;
}

// The state's first differing word, named (element, gradient, word).
std::string first_difference(const Case& c, const std::vector<uint64_t>& got, const std::vector<uint64_t>& want) {
  if (got.size() != want.size()) return "sizes " + std::to_string(got.size()) + " vs " + std::to_string(want.size());
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i]) {
      const int64_t e = int64_t(i) / kBinnedWords, gd = c.gates * c.dim;
      const std::string where = e < c.dim          ? "dweight[" + std::to_string(e) + "]"
                                : e < c.dim + gd ? "dshift element " + std::to_string(e - c.dim)
                                                 : "dscale element " + std::to_string(e - c.dim - gd);
      return where + " word " + std::to_string(i % kBinnedWords) + ": " + std::to_string(got[i]) + " vs host " +
             std::to_string(want[i]);
    }
  return "";
}

struct Shape {
  int64_t rows, dim, gates;
};

// The device partial's words equal host-repro's: every dtype and value class
// (nan_inf, huge, signed_zero, subnormal: the special terms and the tops at
// both ends), dims that take element loads (odd, below a chunk) and vector
// loads, rows of several tiles, a tile's last rows short of a load group
// (1, 2 and 3 of 4), a row of several chunks a thread, a gate a row, unused
// gates, no rows; the terms kernel adding 1, 2 and 4 rows at once.
TEST(RmsnormReproCuda, PartialStateEqualsHostRepros) {
  GATECHECK_REQUIRE_GPU();
  const Implementation cuda = impl("cuda-repro", Device::cuda), host = impl("host-repro", Device::cpu);
  uint64_t seed = 1;
  for (Shape sh : {Shape{1, 1, 1}, Shape{5, 3, 8}, Shape{300, 37, 5}, Shape{700, 64, 3}, Shape{260, 24, 260},
                   Shape{1000, 40, 400}, Shape{129, 8, 1}, Shape{6, 16, 2}, Shape{259, 24, 7}, Shape{40, 9000, 2},
                   Shape{0, 16, 3}})
    for (DType t : {DType::bf16, DType::f16, DType::f32})
      for (const std::string& values : value_classes_of(op())) {
        const Case c = rms_case(t, sh.rows, sh.dim, sh.gates, "uniform", values, seed++);
        const std::vector<uint64_t> want = partial_of(host, c);
        for (int g : {1, 2, 4}) {  // the terms kernel's rows at once
          ASSERT_TRUE(rmsnorm_modulate_repro_cuda_set_terms_rows(g));
          const std::vector<uint64_t> got = partial_of(cuda, c);
          rmsnorm_modulate_repro_cuda_set_terms_rows(kTermsRowsAtOnceDefault);
          ASSERT_EQ(got.size(), want.size()) << describe(c);
          EXPECT_EQ(first_difference(c, got, want), "") << describe(c) << ", " << g << " rows at once";
        }
      }
}

// Every index pattern (runs of one gate long and short, gates unused,
// sorted and not): the same words.
TEST(RmsnormReproCuda, EveryIndexPatternGivesHostReprosState) {
  GATECHECK_REQUIRE_GPU();
  const Implementation cuda = impl("cuda-repro", Device::cuda), host = impl("host-repro", Device::cpu);
  uint64_t seed = 100;
  for (const std::string& pattern : all_index_patterns())
    for (DType t : {DType::bf16, DType::f32}) {
      const Case c = rms_case(t, 1500, 96, 13, pattern, seed % 2 ? "normal" : "mixed_magnitude", seed);
      ++seed;
      EXPECT_EQ(first_difference(c, partial_of(cuda, c), partial_of(host, c)), "") << describe(c);
    }
}

// The backward call: dweight, dshift and dscale host-repro's bits; out and dx
// the cuda kernels' (and so the twin's, which host-repro keeps).
TEST(RmsnormReproCuda, BackwardEqualsHostReproAndTheCudaKernelsOtherOutputs) {
  GATECHECK_REQUIRE_GPU();
  const Implementation repro = impl("cuda-repro", Device::cuda), host = impl("host-repro", Device::cpu),
                       today = impl("cuda", Device::cuda);
  uint64_t seed = 200;
  for (Shape sh : {Shape{300, 37, 5}, Shape{1000, 128, 7}, Shape{64, 3072, 4}, Shape{3, 1, 2}})
    for (DType t : {DType::bf16, DType::f16, DType::f32})
      for (const char* values : {"normal", "order_sensitive", "nan_inf", "huge", "subnormal"}) {
        const Case c = rms_case(t, sh.rows, sh.dim, sh.gates, "uniform", values, seed++);
        const RunResult a = run_case(repro, c), b = run_case(host, c), o = run_case(today, c);
        ASSERT_TRUE(a.status.ok()) << a.status.message;
        ASSERT_TRUE(b.status.ok() && o.status.ok()) << b.status.message << o.status.message;
        for (const char* g : kGrads) EXPECT_TRUE(a.outputs[g] == b.outputs[g]) << g << " on " << describe(c);
        for (const char* n : {"out", "dx"}) EXPECT_TRUE(a.outputs[n] == o.outputs[n]) << n << " on " << describe(c);
      }
}

// Device states of n parts, uploaded consecutively, combined on the device.
std::vector<uint64_t> device_combine(const Case& full, const std::vector<std::vector<uint64_t>>& states) {
  const size_t words = states.empty() ? 0 : states[0].size();
  uint64_t *d = nullptr, *out = nullptr;
  EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), std::max<size_t>(1, words * states.size()) * 8), cudaSuccess);
  EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&out), std::max<size_t>(1, words) * 8), cudaSuccess);
  for (size_t i = 0; i < states.size(); ++i)
    cudaMemcpy(d + i * words, states[i].data(), words * 8, cudaMemcpyHostToDevice);
  const Status s = rmsnorm_modulate_repro_combine_cuda(full.problem(Device::cuda), d, int32_t(states.size()), out);
  EXPECT_TRUE(s.ok()) << s.message;
  std::vector<uint64_t> h(words);
  cudaMemcpy(h.data(), out, words * 8, cudaMemcpyDeviceToHost);
  cudaFree(d);
  cudaFree(out);
  return h;
}

// Every partition drawn (contiguous micro-batches, strided and random parts,
// 2 to 64 of them), each part's state from the device, combined on the
// device in a shuffled order and on the host in rank order: the full batch's
// words; finalized on the device: host-repro's full backward's bits.
TEST(RmsnormReproCuda, EveryPartitionAndCombineOrderGivesTheFullBatchsBits) {
  GATECHECK_REQUIRE_GPU();
  const Implementation cuda = impl("cuda-repro", Device::cuda), host = impl("host-repro", Device::cpu);
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 18; ++trial) {
    const DType t = std::vector<DType>{DType::bf16, DType::f16, DType::f32}[trial % 3];
    const Case c = rms_case(t, 900, 40, 6, trial % 4 < 2 ? "uniform" : "sorted_random",
                            std::vector<std::string>{"mixed_magnitude", "order_sensitive", "nan_inf"}[trial % 3],
                            300 + uint64_t(trial));
    const int parts = 2 + int(rng() % 63);
    std::vector<std::vector<int64_t>> rows(static_cast<size_t>(parts));
    for (int64_t r = 0; r < c.rows; ++r)
      rows[trial % 3 == 0 ? size_t(r * parts / c.rows) : trial % 3 == 1 ? size_t(r % parts) : size_t(rng() % parts)]
          .push_back(r);
    std::vector<std::vector<uint64_t>> states;
    for (const auto& p : rows) states.push_back(partial_of(cuda, sub_case(c, p)));
    std::vector<uint64_t> in_rank_order;
    ASSERT_TRUE(exchange_combine(cuda, c, states, &in_rank_order).ok());
    std::shuffle(states.begin(), states.end(), rng);
    const std::vector<uint64_t> whole = partial_of(host, c);
    EXPECT_EQ(first_difference(c, device_combine(c, states), whole), "") << describe(c) << ", " << parts << " parts";
    EXPECT_EQ(first_difference(c, in_rank_order, whole), "") << describe(c) << ", " << parts << " parts";
    Outputs got = outputs_for(c);
    ASSERT_TRUE(exchange_finalize(cuda, c, in_rank_order, &got).ok());
    const RunResult full = run_case(host, c);
    ASSERT_TRUE(full.status.ok()) << full.status.message;
    for (const char* g : kGrads) EXPECT_TRUE(got[g] == full.outputs[g]) << g << " on " << describe(c);
  }
}

// Through the engine: split_invariance and the default properties it
// claims, on cases whose plans compare something (each verdict must pass,
// and a vacuous one does not).
void expect_claims_kept(const Implementation& m) {
  for (uint64_t seed = 1; seed <= 9; ++seed) {
    Case c = rms_case(std::vector<DType>{DType::bf16, DType::f16, DType::f32}[seed % 3], 200, 40, 4, "uniform",
                      seed % 2 ? "normal" : "order_sensitive", seed);
    c.plan = make_plan(split_plan_kinds()[seed % 3], c, seed);
    for (const char* prop : {"split_invariance", "accuracy", "repeatable", "full_write", "row_invariance",
                             "error_inputs"}) {
      const Verdict v = check_property(prop, m, c);
      EXPECT_TRUE(v.passed) << prop << " on " << describe(c) << ": " << v.message;
    }
    // segment_invariance compares whole gate segments: a split plan cuts
    // them (its verdict would be vacuous), gate_groups keeps them.
    Case whole = c;
    whole.plan = make_plan("gate_groups", whole, seed);
    const Verdict v = check_property("segment_invariance", m, whole);
    EXPECT_TRUE(v.passed) << "segment_invariance on " << describe(whole) << ": " << v.message;
  }
}

TEST(RmsnormReproCuda, KeepsItsClaims) {
  GATECHECK_REQUIRE_GPU();
  expect_claims_kept(impl("cuda-repro", Device::cuda));
}

// The same cases on host-repro, anywhere: their plans compare something.
TEST(RmsnormReproCuda, HostReproKeepsItsClaimsOnTheSameCases) { expect_claims_kept(impl("host-repro", Device::cpu)); }

// At a DiT's width: bf16 4096 x 3072, 32 gates: host-repro's bits.
TEST(RmsnormReproCuda, DitWidthEqualsHostRepro) {
  GATECHECK_REQUIRE_GPU();
  const Case c = rms_case(DType::bf16, 4096, 3072, 32, "uniform", "normal", 9);
  const RunResult a = run_case(impl("cuda-repro", Device::cuda), c), b = run_case(impl("host-repro", Device::cpu), c);
  ASSERT_TRUE(a.status.ok()) << a.status.message;
  ASSERT_TRUE(b.status.ok()) << b.status.message;
  for (const char* g : kGrads) EXPECT_TRUE(a.outputs[g] == b.outputs[g]) << g;
}

// A bad index: the backward and the exchange's partial fail, naming it, as
// host-repro's do; bad arguments to combine and finalize, named.
TEST(RmsnormReproCuda, RejectsBadArgumentsSayingWhich) {
  GATECHECK_REQUIRE_GPU();
  const Implementation cuda = impl("cuda-repro", Device::cuda), host = impl("host-repro", Device::cpu);
  Case c = rms_case(DType::bf16, 50, 24, 3, "uniform", "normal", 4);
  c.index[17] = 3;
  std::vector<uint64_t> s;
  const Status pc = exchange_partial(cuda, c, &s), ph = exchange_partial(host, c, &s);
  ASSERT_FALSE(pc.ok());
  EXPECT_EQ(pc.kind, ErrorKind::index_out_of_range) << pc.message;
  EXPECT_EQ(pc.message, ph.message);
  EXPECT_NE(pc.message.find("index[17]"), std::string::npos) << pc.message;
  const RunResult r = run_case(cuda, c), today = run_case(impl("cuda", Device::cuda), c);
  ASSERT_FALSE(r.status.ok());
  EXPECT_EQ(r.status.kind, ErrorKind::index_out_of_range) << r.status.message;
  EXPECT_EQ(r.status.message, today.status.message);  // the backward speaks as the cuda kernels'
  EXPECT_NE(r.status.message.find("index[17]"), std::string::npos) << r.status.message;

  const gatecheck_split_exchange* ex = rmsnorm_modulate_repro_cuda_exchange();
  gatecheck_problem p{4, 3, 2, GATECHECK_BF16, GATECHECK_CUDA, nullptr};
  uint64_t out[4];
  EXPECT_NE(ex->combine(&p, nullptr, 2, out), 0);
  EXPECT_NE(std::string(ex->last_error()).find("states or out is null"), std::string::npos) << ex->last_error();
  EXPECT_NE(ex->partial(nullptr, out), 0);
  EXPECT_NE(ex->finalize(nullptr, out), 0);
  EXPECT_EQ(ex->state_words(&p), (3 + 2 * 2 * 3) * 4);
  EXPECT_FALSE(rmsnorm_modulate_repro_combine_cuda(p, nullptr, -1, nullptr).ok());
  for (int rows : {0, 3, 8, -1}) EXPECT_FALSE(rmsnorm_modulate_repro_cuda_set_terms_rows(rows)) << rows;
}

// Device memory for a test, freed at the end.
struct Owned {
  std::vector<void*> ptrs;
  void* get(size_t bytes, const void* host = nullptr) {
    void* d = nullptr;
    EXPECT_EQ(cudaMalloc(&d, std::max<size_t>(bytes, 256)), cudaSuccess);
    if (host) cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice);
    ptrs.push_back(d);
    return d;
  }
  ~Owned() {
    for (void* d : ptrs) cudaFree(d);
  }
};

// The cost, printed for the record (issue 35's targets, as gate_residual's:
// the reproducible backward at most 1.10x the cuda backward at 32768 x 3072
// and 1.15x at 131072; the combine of 64 states beside the rate it reads them
// at: its state holds dweight and two tables, so the 50 us set for one
// table's state is not its target). bf16, 32 gates,
// uniform indices. The reproducible backward is the partial with dx (the
// row kernel, which gives the terms their rstd) and the finalize, as the
// plugin's backward runs them. Asserts only that the timed calls computed
// host-repro's gradients and the cuda backward's dx (at 32768 rows; the host
// is slow past that).
TEST(RmsnormReproCuda, CostAgainstTheCudaBackward) {
  GATECHECK_REQUIRE_GPU();
  for (int64_t rows : {int64_t(32768), int64_t(131072)}) {
    const int64_t dim = 3072, gates = 32;
    const Case c = rms_case(DType::bf16, rows, dim, gates, "uniform", "normal", 5);
    cudaStream_t s;
    cudaStreamCreate(&s);
    gatecheck_problem p = c.problem(Device::cuda, s);
    Owned d;
    OpCall call = OpCall::shaped(op(), Pass::backward, p);
    const size_t big = size_t(rows * dim * 2), table = size_t(gates * dim * 2);
    auto in = [&](const char* n, TensorBuf t) { call.input(n) = t; };
    auto out = [&](const char* n, TensorBuf t) { call.output(n) = t; };
    in("x", {d.get(big, c.input("x").bytes.data()), rows, dim});
    in("grad_out", {d.get(big, c.input("grad_out").bytes.data()), rows, dim});
    in("w", {d.get(size_t(dim * 2), c.input("w").bytes.data()), 1, dim});
    in("shift", {d.get(table, c.input("shift").bytes.data()), gates, dim});
    in("scale", {d.get(table, c.input("scale").bytes.data()), gates, dim});
    in("index", {d.get(size_t(rows * 8), c.index.data()), rows, 1});
    out("dx", {d.get(big), rows, dim});
    out("dweight", {d.get(size_t(dim * 2)), 1, dim});
    out("dshift", {d.get(table), gates, dim});
    out("dscale", {d.get(table), gates, dim});
    call.scalars[size_t(op().scalar_index("eps"))] = c.scalars[size_t(op().scalar_index("eps"))];
    const int64_t words = rmsnorm_modulate_repro_state_words(p);
    auto* state = static_cast<uint64_t*>(d.get(size_t(words) * 8));
    auto* bad = static_cast<unsigned long long*>(d.get(8));
    void* cuda_scratch = d.get(size_t(rmsnorm_modulate_cuda_bwd_scratch_bytes(rows, dim, gates)));
    void* repro_scratch = d.get(size_t(rmsnorm_modulate_repro_cuda_scratch_bytes(p)));
    auto cuda_bwd = [&] { rmsnorm_modulate_cuda_run(call, bad, cuda_scratch); };
    auto partial = [&] { rmsnorm_modulate_repro_partial_cuda(call, state, bad, repro_scratch); };
    auto repro_bwd = [&] {
      rmsnorm_modulate_repro_partial_cuda(call, state, bad, repro_scratch, /*with_dx=*/true);
      rmsnorm_modulate_repro_finalize_cuda(call, state);
    };
    auto dx_now = [&] {
      std::vector<uint8_t> h(big);
      cudaMemcpy(h.data(), call.output("dx").data, big, cudaMemcpyDeviceToHost);
      return h;
    };
    auto copy = [&] {
      cudaMemcpyAsync(call.output("dx").data,
                      call.input("grad_out").data, big, cudaMemcpyDeviceToDevice, s);
    };
    testing_cost::print_backward_cost(s, 10,
                                      "rmsnorm_modulate bf16 " + std::to_string(rows) + " x " + std::to_string(dim) +
                                          ", " + std::to_string(gates) + " gates",
                                      rows > 32768 ? 1.15 : 1.10, {cuda_bwd, repro_bwd, partial, copy});
    for (int g : {1, 2, 4}) {  // the terms kernel's rows at once, each timed beside the default above
      rmsnorm_modulate_repro_cuda_set_terms_rows(g);
      float best = 0;
      for (int round = 0; round < 3; ++round) {
        const float t = testing_cost::time_ms(s, 10, partial);
        best = round ? std::min(best, t) : t;
      }
      std::printf("  its state alone, the terms kernel adding %d row%s at once: %.3f ms%s\n", g, g > 1 ? "s" : "", best,
                  g == kTermsRowsAtOnceDefault ? " (the default)" : "");
    }
    rmsnorm_modulate_repro_cuda_set_terms_rows(kTermsRowsAtOnceDefault);
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    if (rows == 32768) {
      repro_bwd();
      ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
      const RunResult want = run_case(impl("host-repro", Device::cpu), c);
      ASSERT_TRUE(want.status.ok()) << want.status.message;
      for (const char* g : kGrads) {
        std::vector<uint8_t> got(want.outputs[g].bytes.size());
        cudaMemcpy(got.data(), call.output(g).data, got.size(), cudaMemcpyDeviceToHost);
        EXPECT_TRUE(got == want.outputs[g].bytes) << g;
      }
      const std::vector<uint8_t> repro_dx = dx_now();
      cuda_bwd();
      ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
      EXPECT_TRUE(repro_dx == dx_now()) << "dx: the cuda backward's bits";
    }
    testing_cost::print_combine_cost(
        s, state, words,
        [&](const uint64_t* states, int32_t n, uint64_t* combined) {
          rmsnorm_modulate_repro_combine_cuda(p, states, n, combined);
        },
        nullptr, /*target=*/false);
    EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    cudaStreamDestroy(s);
  }
}

}  // namespace
}  // namespace gatecheck
