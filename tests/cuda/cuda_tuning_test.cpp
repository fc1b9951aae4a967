// GATECHECK_CUDA_TUNING's parser: every knob, and bad items named, not applied.
// (No GPU needed: this is host code.)
#include <gtest/gtest.h>

#include <string>

#include "kernels/cuda/gate_residual_cuda.h"

namespace gatecheck {
namespace {

TEST(CudaTuning, ParsesEveryKnob) {
  std::string w;
  const CudaTuning t = parse_cuda_tuning("plan=3,tile=3,vec=8,no_pdl,seg=256,threads=512,cols=1,cluster=4,fwd_rows=1", &w);
  EXPECT_EQ(w, "");
  EXPECT_EQ(t.fwd_rows, 1);
  EXPECT_EQ(t.pipe_threads, 512);
  EXPECT_EQ(t.pipe_cols, 1);
  EXPECT_EQ(t.fused_cluster, 4);
  EXPECT_EQ(t.bwd_plan, 3);
  EXPECT_EQ(t.bwd_tile, 3);
  EXPECT_EQ(t.bwd_vector_bytes, 8);
  EXPECT_EQ(t.pipe_row_bytes, 256);
  EXPECT_TRUE(t.no_pdl);
}

TEST(CudaTuning, ShortTilesKernel) {
  std::string w;
  EXPECT_EQ(parse_cuda_tuning("tile=4", &w).bwd_tile, 4);
  EXPECT_EQ(w, "");
  EXPECT_EQ(parse_cuda_tuning("tile=5", &w).bwd_tile, 0);
  EXPECT_NE(w.find("'tile=5' ignored"), std::string::npos) << w;
}

TEST(CudaTuning, OneBlockPlanWarps) {
  std::string w;
  EXPECT_EQ(parse_cuda_tuning("plan_warps=8", &w).plan_warps, 8);
  EXPECT_EQ(parse_cuda_tuning("plan_warps=16", &w).plan_warps, 16);
  EXPECT_EQ(w, "");
  EXPECT_EQ(parse_cuda_tuning("plan_warps=4", &w).plan_warps, 0);
  EXPECT_NE(w.find("'plan_warps=4' ignored"), std::string::npos) << w;
}

TEST(CudaTuning, CombineThreads) {
  std::string w;
  EXPECT_EQ(parse_cuda_tuning("combine=8", &w).combine_threads, 8);
  EXPECT_EQ(parse_cuda_tuning("combine=1", &w).combine_threads, 1);
  EXPECT_EQ(w, "");
  EXPECT_EQ(parse_cuda_tuning("combine=3", &w).combine_threads, 0);
  EXPECT_NE(w.find("'combine=3' ignored"), std::string::npos) << w;
}

TEST(CudaTuning, CombineGridLoadsAndPipelineDepth) {
  std::string w;
  const CudaTuning t = parse_cuda_tuning("combine_grid=8,combine_cached,depth=4", &w);
  EXPECT_EQ(t.combine_blocks_per_sm, 8);
  EXPECT_TRUE(t.combine_cached);
  EXPECT_EQ(t.binned_pipe_depth, 4);
  EXPECT_EQ(w, "");
  const CudaTuning bad = parse_cuda_tuning("combine_grid=3,depth=2,combine_cached=1", &w);
  EXPECT_EQ(bad.combine_blocks_per_sm, 0);
  EXPECT_EQ(bad.binned_pipe_depth, 0);
  EXPECT_FALSE(bad.combine_cached);
  for (const char* named : {"'combine_grid=3' ignored", "'depth=2' ignored", "'combine_cached=1' ignored"})
    EXPECT_NE(w.find(named), std::string::npos) << named << " not in: " << w;
}

TEST(CudaTuning, RowSegmentsOf448Bytes) {
  std::string w;
  EXPECT_EQ(parse_cuda_tuning("seg=448", &w).pipe_row_bytes, 448);
  EXPECT_EQ(parse_cuda_tuning("seg=384", &w).pipe_row_bytes, 0);
  EXPECT_NE(w.find("'seg=384' ignored"), std::string::npos) << w;
}

TEST(CudaTuning, NothingSetIsAutomatic) {
  std::string w;
  for (const char* text : {static_cast<const char*>(nullptr), ""}) {
    const CudaTuning t = parse_cuda_tuning(text, &w);
    EXPECT_EQ(t.bwd_plan, 0);
    EXPECT_EQ(t.bwd_tile, 0);
    EXPECT_EQ(t.bwd_vector_bytes, 0);
    EXPECT_EQ(t.pipe_threads, 0);
    EXPECT_EQ(t.pipe_cols, 0);
    EXPECT_EQ(t.fwd_rows, 0);
    EXPECT_EQ(t.plan_warps, 0);
    EXPECT_FALSE(t.no_pdl);
  }
  EXPECT_EQ(w, "");
}

TEST(CudaTuning, BadItemsAreNamedAndLeftAutomatic) {
  std::string w;
  const CudaTuning t = parse_cuda_tuning("plan=4,tile=x,vec=5,fast,plan=2,seg=128,threads=1024,cols=3,cluster=5,fwd_rows=8", &w);
  EXPECT_EQ(t.bwd_plan, 2);  // the valid item still applies
  EXPECT_EQ(t.bwd_tile, 0);
  EXPECT_EQ(t.bwd_vector_bytes, 0);
  EXPECT_EQ(t.pipe_threads, 0);
  EXPECT_EQ(t.pipe_cols, 0);
  EXPECT_EQ(t.fwd_rows, 0);
  for (const char* bad : {"'plan=4' ignored", "'tile=x' ignored", "'vec=5' ignored", "'fast' ignored", "'seg=128' ignored",
                          "'threads=1024' ignored", "'cols=3' ignored", "'cluster=5' ignored", "'fwd_rows=8' ignored"})
    EXPECT_NE(w.find(bad), std::string::npos) << bad << " not in: " << w;
}

// The phase counters exist only in a measuring build (-DGATECHECK_PIPE_PHASES).
TEST(CudaTuning, PipePhasesOnlyInAMeasuringBuild) {
  double ph[kPipePhaseCount];
  unsigned long long warps = 7;
#ifdef GATECHECK_PIPE_PHASES
  GTEST_SKIP() << "measuring build";
#endif
  EXPECT_FALSE(gate_residual_cuda_pipe_phases(ph, &warps));
  EXPECT_EQ(warps, 7u);
}

}  // namespace
}  // namespace gatecheck
