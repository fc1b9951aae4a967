// gate_residual's CUDA tuning knobs: GATECHECK_CUDA_TUNING parsed (each item
// checked against the values it may take, an unknown one warned about and
// ignored) into the CudaTuning that every call reads.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gate_residual_cuda.h"

namespace gatecheck {

CudaTuning parse_cuda_tuning(const char* text, std::string* warnings) {
  CudaTuning t;
  const std::string s = text ? text : "";
  auto warn = [&](const std::string& w) {
    if (warnings) *warnings += (warnings->empty() ? "" : "; ") + w;
  };
  // value of "key=V" when V is one of `allowed`, else -1
  auto value = [](const std::string& item, size_t key_len, std::initializer_list<int> allowed) {
    const std::string v = item.substr(key_len);
    if (v.empty() || v.size() > 2 || v.find_first_not_of("0123456789") != std::string::npos) return -1;
    const int n = std::stoi(v);
    for (int a : allowed)
      if (n == a) return n;
    return -1;
  };
  size_t at = 0;
  while (at <= s.size() && !s.empty()) {
    size_t comma = s.find(',', at);
    if (comma == std::string::npos) comma = s.size();
    const std::string item = s.substr(at, comma - at);
    int v = -1;
    if (item == "no_pdl") t.no_pdl = true;
    else if (item.rfind("plan=", 0) == 0 && (v = value(item, 5, {0, 1, 2, 3})) >= 0) t.bwd_plan = v;
    else if (item.rfind("tile=", 0) == 0 && (v = value(item, 5, {0, 1, 2, 3, 4})) >= 0) t.bwd_tile = v;
    else if (item.rfind("vec=", 0) == 0 && (v = value(item, 4, {0, 2, 4, 8, 16})) >= 0) t.bwd_vector_bytes = v;
    else if (item == "seg=256" || item == "seg=448" || item == "seg=512") t.pipe_row_bytes = std::stoi(item.substr(4));
    else if (item == "threads=256" || item == "threads=512") t.pipe_threads = std::stoi(item.substr(8));
    else if (item == "cols=1" || item == "cols=2") t.pipe_cols = std::stoi(item.substr(5));
    else if (item.rfind("cluster=", 0) == 0 && (v = value(item, 8, {1, 2, 3, 4, 6, 8})) >= 0) t.fused_cluster = v;
    else if (item.rfind("fwd_rows=", 0) == 0 && (v = value(item, 9, {0, 1, 2, 4})) >= 0) t.fwd_rows = v;
    else if (item == "plan_warps=8" || item == "plan_warps=16") t.plan_warps = std::stoi(item.substr(11));
    else if (item.rfind("combine=", 0) == 0 && (v = value(item, 8, {1, 2, 4, 8})) >= 0) t.combine_threads = v;
    else if (item.rfind("combine_grid=", 0) == 0 && (v = value(item, 13, {1, 2, 4, 8, 16})) >= 0)
      t.combine_blocks_per_sm = v;
    else if (item == "combine_cached") t.combine_cached = true;
    else if (item == "depth=3" || item == "depth=4") t.binned_pipe_depth = std::stoi(item.substr(6));
    else if (!item.empty())
      warn("'" + item +
           "' ignored (known: no_pdl, plan=0|1|2|3, tile=0|1|2|3|4, vec=0|2|4|8|16, seg=256|448|512, threads=256|512, cols=1|2, cluster=1|2|3|4|6|8, fwd_rows=1|2|4, plan_warps=8|16, combine=1|2|4|8, combine_grid=1|2|4|8|16, combine_cached, depth=3|4)");
    at = comma + 1;
  }
  return t;
}

namespace {
// GATECHECK_CUDA_TUNING sets the knobs at start-up: a way to take one path
// out of the picture when a kernel is suspect, without rebuilding.
CudaTuning tuning_from_env() {
  std::string warnings;
  CudaTuning t = parse_cuda_tuning(std::getenv("GATECHECK_CUDA_TUNING"), &warnings);
  if (!warnings.empty()) std::fprintf(stderr, "gatecheck: GATECHECK_CUDA_TUNING: %s\n", warnings.c_str());
  return t;
}
}  // namespace

CudaTuning& gate_residual_cuda_tuning() {
  static CudaTuning t = tuning_from_env();
  return t;
}

}  // namespace gatecheck
