// gatecheck-bench's --bwd-variants: short names and GATECHECK_CUDA_TUNING
// items give the same knobs, and a bad setting is named, not run.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bench/bench_options.h"

namespace gatecheck {
namespace bench {
namespace {

// The variants of a list that must parse (a parse error fails the test).
std::vector<Variant> parsed(const std::string& specs, const std::string& vecs = "") {
  std::vector<Variant> v;
  std::string err;
  EXPECT_TRUE(parse_variants(specs, vecs, &v, &err)) << err;
  return v;
}

CudaTuning one(const std::string& spec) {
  const std::vector<Variant> v = parsed(spec);
  EXPECT_EQ(v.size(), 1u);
  return v.empty() ? CudaTuning{} : v[0].tuning;
}

void expect_same(const CudaTuning& a, const CudaTuning& b, const std::string& what) {
  EXPECT_EQ(a.bwd_plan, b.bwd_plan) << what;
  EXPECT_EQ(a.bwd_tile, b.bwd_tile) << what;
  EXPECT_EQ(a.bwd_vector_bytes, b.bwd_vector_bytes) << what;
  EXPECT_EQ(a.pipe_row_bytes, b.pipe_row_bytes) << what;
  EXPECT_EQ(a.pipe_threads, b.pipe_threads) << what;
  EXPECT_EQ(a.pipe_cols, b.pipe_cols) << what;
  EXPECT_EQ(a.fused_cluster, b.fused_cluster) << what;
}

TEST(BenchVariants, ShortNamesAreTuningItems) {
  const std::vector<std::pair<std::string, std::string>> same = {
      {"cub", "plan=1"},       {"count", "plan=2"},         {"fused", "plan=3"},  {"thread", "tile=1"},
      {"staged", "tile=2"},    {"piped", "tile=3"},         {"short", "tile=4"},         {"seg256", "seg=256"}, {"t512", "threads=512"},
      {"c1", "cols=1"},        {"kx4", "cluster=4"},        {"v8", "vec=8"},
      {"count+piped+v16", "plan=2+tile=3+vec=16"}, {"fused+t512+c1+kx2", "plan=3,threads=512,cols=1,cluster=2"}};
  for (const auto& [short_form, items] : same) {
    std::string as_env = items;
    for (char& c : as_env)
      if (c == '+') c = ',';
    expect_same(one(short_form), parse_cuda_tuning(as_env.c_str(), nullptr), short_form);
    if (items.find(',') == std::string::npos) expect_same(one(items), one(short_form), items);
  }
  EXPECT_EQ(one("count+piped").bwd_plan, 2);  // and not just equal to each other
  EXPECT_EQ(one("count+piped").bwd_tile, 3);
  expect_same(one("auto"), CudaTuning{}, "auto");
}

TEST(BenchVariants, LabelsAndOrderAreKept) {
  const std::vector<Variant> v = parsed("auto,fused,count+thread");
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].label, "auto");
  EXPECT_EQ(v[1].label, "fused");
  EXPECT_EQ(v[2].label, "count+thread");
  EXPECT_EQ(v[2].tuning.bwd_tile, 1);
}

TEST(BenchVariants, OlderVectorWidthListStillWorks) {
  const std::vector<Variant> v = parsed("", "0,4,16");
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].label, "auto");
  EXPECT_EQ(v[1].tuning.bwd_vector_bytes, 4);
  EXPECT_EQ(v[2].label, "v16");
}

TEST(BenchVariants, BadSettingsAreNamed) {
  for (const std::string bad : {"cub+bogus", "count+v3", "plan=4", "fused+no_pdl", "cub++piped", "kx5", "threads=384", "fwd_rows=2", "fused+fwd_rows=1"}) {
    std::vector<Variant> v;
    std::string err;
    EXPECT_FALSE(parse_variants("auto," + bad, "", &v, &err)) << bad;
    EXPECT_NE(err.find("in '" + bad + "' is not a backward setting"), std::string::npos) << err;
  }
}

TEST(BenchVariants, CommaListsDropEmptyItems) {
  EXPECT_EQ(split_commas("bf16,,fp16,"), (std::vector<std::string>{"bf16", "fp16"}));
  EXPECT_TRUE(split_commas("").empty());
}

// The benchmark's defaults and the one-gate-per-row shapes pass.
TEST(BenchShapes, KnownItemsPass) {
  std::string err;
  EXPECT_TRUE(check_shape_lists("bf16,fp16", "3072,5376", "4097,32768,131072", "9,rows/1024,rows/3", "sorted,random", &err))
      << err;
  EXPECT_TRUE(check_shape_lists("fp32,f16", "1", "1", "rows/1,1", "shuffled", &err)) << err;
}

TEST(BenchShapes, DtypeNames) {
  EXPECT_EQ(dtype_of("bf16"), GATECHECK_BF16);
  EXPECT_EQ(dtype_of("fp16"), GATECHECK_F16);
  EXPECT_EQ(dtype_of("f16"), GATECHECK_F16);
  EXPECT_EQ(dtype_of("fp32"), GATECHECK_F32);
  EXPECT_EQ(dtype_of("f32"), GATECHECK_F32);
  EXPECT_EQ(dtype_of("bf61"), -1);
}

// Each bad item is refused with its option named (before, an unknown dtype
// ran as bf16 and an unknown pattern as random).
TEST(BenchShapes, BadItemsAreNamed) {
  struct Bad {
    const char *dtypes, *dims, *rows, *gates, *patterns, *message;
  };
  const Bad bad[] = {
      {"bf16,bf61", "3072", "4097", "9", "sorted", "--dtypes: 'bf61' is not bf16, fp16 or fp32"},
      {"bf16", "3072,0", "4097", "9", "sorted", "--dims: '0' is not a positive number"},
      {"bf16", "3072", "4k", "9", "sorted", "--rows: '4k' is not a positive number"},
      {"bf16", "3072", "4097", "rows/0", "sorted", "--gates: 'rows/0' is not a positive number or rows/K"},
      {"bf16", "3072", "4097", "-9", "sorted", "--gates: '-9' is not"},
      {"bf16", "3072", "4097", "9", "sorted,perm", "--patterns: 'perm' is not sorted, random or shuffled"},
      {"bf16", "3072", "", "9", "sorted", "--rows '': no item"},
  };
  for (const auto& b : bad) {
    std::string err;
    EXPECT_FALSE(check_shape_lists(b.dtypes, b.dims, b.rows, b.gates, b.patterns, &err)) << b.message;
    EXPECT_NE(err.find(b.message), std::string::npos) << err;
  }
}

}  // namespace
}  // namespace bench
}  // namespace gatecheck
