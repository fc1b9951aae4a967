// A scale-tier case in a corpus file (case_json.h): the generator spec, and
// the view a shrinker left, with kept rows and columns as [begin, end) runs.
//
//   "scale": {"rows": 699100, "dim": 3072, "gates": 9, "index_pattern": "uniform",
//             "segment": 0, "index_seed": 7, "values": "exact", "value_bound": 4,
//             "frac_bits": 0, "value_seed": 9, "plan_kind": "probe", "plan_seed": 3,
//             "rung": "past 2^31 elements",
//             "view": {"rows": [[0, 65536]], "cols": [[0, 1]], "gates": [2],
//                      "remap_default": -1, "remap": [[2, 0]], "batches": [0, 3], "no_plan": false}}
//
// remap maps each generated gate to the kept gate its rows use (-1: none):
// remap_default for every gate not listed in the [generated, kept] pairs.
//
// The top-level rows, dim and gates are the view's, and must agree; the
// top-level "op" (version 2; version 1 is gate_residual's) and "scalars" are
// the spec's op and scalars. Internal
// to the corpus-file readers (it includes nlohmann/json).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "case_json.h"

namespace gatecheck {

struct ScaleShape {
  int64_t rows = 0, dim = 0, gates = 0;
};
ScaleShape view_shape(const ScaleSpec& s, const ScaleView& v);

nlohmann::json scale_to_json(const ScaleSpec& s, const ScaleView& v);
// Throws CaseFileError naming origin and field; checks scale_spec_problem and
// that the view has the file's rows, dim and gates.
ScaleFileCase scale_from_json(const nlohmann::json& j, const OpSchema& op, const std::vector<double>& scalars, DType t,
                              int64_t rows, int64_t dim, int64_t gates, const std::string& origin);

}  // namespace gatecheck
