// The float64 oracle on a sample of a scale-tier case (case/scale_case.h),
// whose values it recomputes from their positions: out, grad_res and grad_y
// of the sampled rows, and grad_gate of the sampled gates on the sampled
// columns, each gate summed over ALL of its rows (streamed, in row order,
// never stored). Same Expected and bounds as oracle_reference().
#pragma once

#include <vector>

#include "../case/scale_case.h"
#include "oracle.h"

namespace gatecheck {

struct SampledReference {
  std::vector<int64_t> rows;                     // the sampled rows of the case
  std::vector<Expected> out, grad_res, grad_y;   // [rows.size() x dim]
  std::vector<int64_t> gates, cols;              // the sampled gates, and the columns checked on each
  std::vector<Expected> grad_gate;               // [gates.size() x cols.size()]
  int64_t gate_terms = 0;                        // terms summed for grad_gate
};

SampledReference oracle_sampled(const ScaleCase& c, const std::vector<int64_t>& rows,
                                const std::vector<int64_t>& gates, const std::vector<int64_t>& cols);

}  // namespace gatecheck
