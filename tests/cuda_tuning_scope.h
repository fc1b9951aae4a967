// A GPU test's forced tuning of gate_residual's CUDA kernels
// (gate_residual_cuda_tuning(), process-wide) for the length of a scope: the
// tuning as it was, GATECHECK_CUDA_TUNING's included, comes back when the
// scope ends, on an ASSERT's early return too, so that no later test in the
// process runs on a path another test forced.
#pragma once

#include "kernels/cuda/gate_residual_cuda.h"

namespace gatecheck {

class TuningScope {
 public:
  TuningScope() : before_(gate_residual_cuda_tuning()) {}
  ~TuningScope() { gate_residual_cuda_tuning() = before_; }
  TuningScope(const TuningScope&) = delete;
  TuningScope& operator=(const TuningScope&) = delete;

 private:
  const CudaTuning before_;
};

}  // namespace gatecheck
