// The oracle's half of each op's description: its float64 reference with the
// per-element bounds, and its model of torch eager's roundings. Each op's are
// written here, apart from the kernels' math (kernels/op_schema.h has the rest
// of the description); an op defined elsewhere (a test's) registers its own.
#pragma once

#include <string>
#include <vector>

#include "oracle.h"
#include "oracle_sampled.h"

namespace gatecheck {

struct OpOracle {
  // Every output's Expected (oracle.h): exact value, rigorous bound, kind.
  Reference (*reference)(const Case& c) = nullptr;
  // torch eager's roundings bit for bit, where they can be modelled; null
  // where not. eager_exact compares `eager_outputs` against it.
  Outputs (*eager_model)(const Case& c) = nullptr;
  std::vector<std::string> eager_outputs = {};
  // What eager_exact promises, in a line (`gatecheck ops` prints it): the
  // outputs pinned and where the model holds.
  const char* eager_scope = "";
  // Its oracle on a sample of a scale-tier case (oracle_sampled.h: values
  // from their positions); null where it has none. Only an op with one
  // draws scale cases.
  SampledReference (*sampled)(const ScaleCase& c, const ScaleSample& s) = nullptr;
  // Are its scale cases' exact values (case/scale_values.h) exact by
  // construction for every output (exact_expected.h)? Else they draw
  // rounding values only.
  bool exact_at_scale = false;
};

// The op's entry; throws std::invalid_argument naming the op when it has none.
const OpOracle& op_oracle(const OpSchema& op);
const OpOracle* find_op_oracle(const OpSchema& op);
// For an op defined outside this folder; false when it has one already.
bool register_op_oracle(const OpSchema& op, const OpOracle& oracle);

// The built-in ops' entries.
Reference gate_residual_reference(const Case& c);
Outputs gate_residual_eager_model(const Case& c);
SampledReference gate_residual_sampled(const ScaleCase& c, const ScaleSample& s);

// rmsnorm_modulate: where row r's fp32 sum of squares stands against fp32's
// overflow (derived in rmsnorm_modulate_rows.cpp). may: in some order,
// or the mean square plus eps may (rstd^ may then be +0, and the oracle
// accepts that outcome for the row); must: the sum overflows in every order.
struct RmsRowOverflow {
  bool may = false, must = false;
};
RmsRowOverflow rmsnorm_modulate_row_overflow(const Case& c, int64_t r);
// Its reference with the rows on `threads` threads (1: in row order on this
// one); the same bits for every count. The catalog's entry takes the
// machine's threads for cases of 4M elements and more.
Reference rmsnorm_modulate_reference_on_threads(const Case& c, int threads);

}  // namespace gatecheck
