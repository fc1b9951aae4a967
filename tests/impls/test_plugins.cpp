// External plugins: the loader's errors, the example plugin (correct, bit for
// bit with the host twin where rounding is fixed), the broken example (caught),
// and the runner's memory findings on plugins that break the rules.
#include <gtest/gtest.h>

#include <string>

#include "tests/gate_residual_test_names.h"
#include "bits_equal.h"
#include "harness/impls/plugin_loader.h"
#include "harness/run/runner.h"
#include "properties/catalog/contract.h"
#include "random_case.h"

namespace gatecheck {
namespace {

using test::bits_equal;
using test::random_case;

const Implementation& host() {
  static const Implementation impl = make_implementation("host", Device::cpu);
  return impl;
}

// The message of the exception load_plugin throws, or "" if it loaded.
std::string load_error(const std::string& path, Device d = Device::cpu) {
  try {
    load_plugin(path, d, gate_residual_schema());
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << text << "' should contain '" << part << "'";
}

// ---- the comparator these tests rely on can fail ----------------------------

TEST(BitsEqual, SeesSignedZeroOneUlpAndNanPayloads) {
  HostTensor a(DType::bf16, 1, 3), b(DType::bf16, 1, 3);
  EXPECT_TRUE(bits_equal("t", a, b));
  b.set_bits(0, 0x8000);  // -0 against +0
  EXPECT_FALSE(bits_equal("t", a, b));
  b.set_bits(0, 0);
  a.set_bits(2, 0x3f80);
  b.set_bits(2, 0x3f81);  // one ulp above 1.0
  const auto r = bits_equal("t", a, b);
  EXPECT_FALSE(r);
  expect_contains(r.message(), "first at [0, 2]");
  a.set_bits(2, 0x7fc0);
  b.set_bits(2, 0x7fc1);  // two NaNs, different payloads
  EXPECT_FALSE(bits_equal("t", a, b));
}

// ---- loader errors name the path and the problem ----------------------------

TEST(PluginLoader, MissingFile) {
  const std::string path = "/nonexistent/libnothing.so";
  const std::string msg = load_error(path);
  expect_contains(msg, "plugin '" + path + "'");
  expect_contains(msg, "cannot be loaded");
}

TEST(PluginLoader, NoEntrySymbol) {
  const std::string msg = load_error(GC_PLUGIN_NO_SYMBOL);
  expect_contains(msg, std::string("plugin '") + GC_PLUGIN_NO_SYMBOL + "'");
  expect_contains(msg, "exports neither gatecheck_plugin_v2 nor gatecheck_plugin_v1");
}

TEST(PluginLoader, WrongAbiVersion) {
  const std::string msg = load_error(GC_PLUGIN_ABI_2);
  expect_contains(msg, std::string("plugin '") + GC_PLUGIN_ABI_2 + "'");
  expect_contains(msg, "abi_version is 2, this gatecheck speaks 1");
}

TEST(PluginLoader, UnsupportedDevice) {
  std::string msg = load_error(GC_EXAMPLE_PLUGIN, Device::cuda);
  expect_contains(msg, std::string("plugin '") + GC_EXAMPLE_PLUGIN + "'");
  expect_contains(msg, "does not support device cuda");
  msg = load_error(GC_PLUGIN_CUDA_ONLY, Device::cpu);
  expect_contains(msg, "does not support device cpu");
}

TEST(PluginLoader, LoadsTheExample) {
  EXPECT_EQ(load_error(GC_EXAMPLE_PLUGIN), "");
  const Implementation impl = make_implementation(std::string("plugin:") + GC_EXAMPLE_PLUGIN, Device::cpu);
  EXPECT_EQ(impl.name, std::string("plugin:") + GC_EXAMPLE_PLUGIN);
  EXPECT_TRUE(known_contract(impl).claims_for("accuracy", "grad_gate", DType::bf16));
}

// ---- the example plugin ------------------------------------------------------

struct Shape {
  int64_t rows, dim, gates;
};
// Gates' segments stay within one 256-row tile, where the example's row-order
// fp32 sum is the host twin's sum exactly; and empty problems.
const Shape kShapes[] = {{1, 1, 1}, {7, 5, 3}, {200, 64, 9}, {250, 3, 1}, {0, 4, 2}, {3, 0, 2}};

TEST(ExamplePlugin, MatchesTheHostTwinBitForBit) {
  const Implementation ex = make_implementation(std::string("plugin:") + GC_EXAMPLE_PLUGIN, Device::cpu);
  uint64_t seed = 11;
  for (DType t : {DType::f32, DType::bf16, DType::f16})
    for (const Shape& s : kShapes) {
      const Case c = random_case(t, s.rows, s.dim, s.gates, seed++);
      const RunResult got = run_case(ex, c), want = run_case(host(), c);
      ASSERT_TRUE(got.status.ok()) << describe(c) << ": " << got.status.message;
      EXPECT_TRUE(got.memory.empty()) << describe(c) << ": " << got.memory[0].detail;
      for (const char* name : kOutputNames)
        EXPECT_TRUE(bits_equal(name, got.outputs[name], want.outputs[name]))
            << describe(c);
    }
}

TEST(ExamplePlugin, RejectsBadInputNamingTheArgument) {
  const Implementation ex = make_implementation(std::string("plugin:") + GC_EXAMPLE_PLUGIN, Device::cpu);
  Case c = random_case(DType::f32, 4, 3, 2, 5);
  c.index[2] = 7;
  RunResult r = run_case(ex, c);
  EXPECT_FALSE(r.status.ok());
  expect_contains(r.status.message, "index[2] = 7 is out of range [0, 2)");

  const gatecheck_problem p{2, 2, 1, GATECHECK_F32, GATECHECK_CPU, nullptr};
  float buf[4] = {0, 0, 0, 0};
  const int64_t index[] = {0, 0};
  EXPECT_NE(ex.api->forward(&p, buf, nullptr, index, buf, buf), 0);
  expect_contains(ex.api->last_error(), "gate is NULL");
  EXPECT_NE(ex.api->backward(&p, buf, buf, index, buf, buf, buf, nullptr), 0);
  expect_contains(ex.api->last_error(), "grad_y is NULL");
  const gatecheck_problem bad_dtype{2, 2, 1, 9, GATECHECK_CPU, nullptr};
  EXPECT_NE(ex.api->forward(&bad_dtype, buf, buf, index, buf, buf), 0);
  expect_contains(ex.api->last_error(), "dtype = 9");
}

// The broken example's bug is exactly the documented one: out's dim % 4 tail
// columns use gate row 0. With dim % 4 == 0 it is still right.
TEST(BrokenPlugin, DiffersFromTheHostTwinOnlyInTheTailColumns) {
  const Implementation broken = make_implementation(std::string("plugin:") + GC_BROKEN_PLUGIN, Device::cpu);
  Case c = random_case(DType::bf16, 6, 5, 2, 9);
  for (size_t r = 0; r < c.index.size(); ++r) c.index[r] = int64_t(r % 2);  // gate 1 is used
  const RunResult got = run_case(broken, c), want = run_case(host(), c);
  ASSERT_TRUE(got.status.ok()) << got.status.message;
  EXPECT_FALSE(bits_equal("out", got.outputs["out"], want.outputs["out"]));
  for (int64_t r = 0; r < c.rows; ++r)
    for (int64_t j = 0; j < 4; ++j)
      EXPECT_EQ(got.outputs["out"].bits(r * c.dim + j), want.outputs["out"].bits(r * c.dim + j)) << r << "," << j;
  EXPECT_TRUE(bits_equal("grad_gate", got.outputs["grad_gate"], want.outputs["grad_gate"]));

  const Case aligned = random_case(DType::bf16, 6, 8, 2, 9);
  EXPECT_TRUE(bits_equal("out", run_case(broken, aligned).outputs["out"], run_case(host(), aligned).outputs["out"]));
}

// ---- memory findings from the runner -----------------------------------------

const MemoryFinding* find(const RunResult& r, MemoryFinding::Kind k) {
  for (const auto& m : r.memory)
    if (m.kind == k) return &m;
  return nullptr;
}

TEST(RunnerMemory, OutOfBoundsWriteIsReported) {
  const Implementation impl = make_implementation(std::string("plugin:") + GC_PLUGIN_OOB_WRITE, Device::cpu);
  const RunResult r = run_case(impl, random_case(DType::f32, 3, 4, 2, 1));
  const MemoryFinding* m = find(r, MemoryFinding::oob_write);
  ASSERT_NE(m, nullptr) << "no oob_write finding";
  EXPECT_EQ(m->tensor, "out");
  EXPECT_EQ(m->first, 3 * 4 * 4) << "the first byte after out";
  EXPECT_EQ(m->count, 1);
  EXPECT_EQ(r.memory.size(), 1u);
}

TEST(RunnerMemory, ModifiedInputIsReported) {
  const Implementation impl = make_implementation(std::string("plugin:") + GC_PLUGIN_INPUT_WRITE, Device::cpu);
  const RunResult r = run_case(impl, random_case(DType::bf16, 3, 4, 2, 1));
  const MemoryFinding* m = find(r, MemoryFinding::input_changed);
  ASSERT_NE(m, nullptr) << "no input_changed finding";
  EXPECT_EQ(m->tensor, "res");
  EXPECT_EQ(m->first, 0);
  EXPECT_EQ(r.memory.size(), 1u);
}

TEST(RunnerMemory, UnwrittenOutputIsReported) {
  const Implementation impl = make_implementation(std::string("plugin:") + GC_PLUGIN_UNWRITTEN, Device::cpu);
  for (int poison : {0, 1}) {
    RunOptions opt;
    opt.poison = poison;
    const RunResult r = run_case(impl, random_case(DType::f16, 3, 4, 2, 1), opt);
    const MemoryFinding* m = find(r, MemoryFinding::unwritten);
    ASSERT_NE(m, nullptr) << "no unwritten finding with poison " << poison;
    EXPECT_EQ(m->tensor, "out");
    EXPECT_EQ(m->first, 11);
    EXPECT_EQ(m->count, 1);
    EXPECT_EQ(r.memory.size(), 1u);
  }
}

TEST(RunnerMemory, TheExampleHasNoFindings) {
  const Implementation impl = make_implementation(std::string("plugin:") + GC_EXAMPLE_PLUGIN, Device::cpu);
  for (DType t : {DType::f32, DType::bf16, DType::f16}) {
    const RunResult r = run_case(impl, random_case(t, 3, 4, 2, 1));
    EXPECT_TRUE(r.status.ok()) << r.status.message;
    EXPECT_TRUE(r.memory.empty()) << r.memory[0].detail;
  }
}

}  // namespace
}  // namespace gatecheck
