// The float64 oracle on a sample of a scale-tier case (case/scale_case.h),
// whose values it recomputes from their positions. Each op's sampler
// (op_oracles.h) gives the same Expected and bounds as its whole-case
// reference, on a sample whose shape follows each output's role:
//  - a row output: every column of the sampled rows;
//  - a table output (a sum per gate): the sampled gates on the sampled
//    columns, each gate summed over ALL of its rows (streamed, never stored);
//  - a column output (a sum over every row): the sampled columns, summed over
//    every row; an op whose terms need a whole row (a row statistic) streams
//    every row of it, up to a stated cost (SampledOutput::skipped says why
//    not, never silently).
#pragma once

#include <string>
#include <vector>

#include "../case/scale_case.h"
#include "oracle.h"

namespace gatecheck {

// What to sample: case rows, gates and columns, each ascending.
struct ScaleSample {
  std::vector<int64_t> rows, gates, cols;
};

struct SampledOutput {
  std::vector<int64_t> labels;  // the output's rows checked: case rows, gates, or {0} for a column output
  std::vector<int64_t> cols;    // its columns checked
  std::vector<Expected> want;   // [labels.size() x cols.size()]
  std::string skipped;          // not judged, and why ("" when judged)
};

struct SampledReference {
  std::vector<SampledOutput> outputs;  // the op's outputs, in its order
  int64_t terms = 0;                   // input elements the sums streamed
};

// The sample's shape for every output of c's op (labels and columns, no
// Expected yet): what each sampler fills.
SampledReference sampled_shape(const ScaleCase& c, const ScaleSample& s);

// c's op's sampler. Throws std::invalid_argument for a sample out of range or
// an op whose oracle has no sampler.
SampledReference oracle_sampled(const ScaleCase& c, const ScaleSample& s);

}  // namespace gatecheck
