// RapidCheck generators for gate_residual cases: shapes weighted towards
// named edge lists, dtypes, named index patterns, named value classes and
// named batch plans. Every knob sits in GenLimits.
//
// A generated Case is described by a small CaseSpec (shape, pattern, value
// class, plan kind and seeds) built with gen::build/gen::set, so RapidCheck
// shrinks the shape and the choices; the tensors are then filled from the
// seeds by a fast deterministic PRNG (filling a million elements through
// per-element RapidCheck generators would be far too slow). On top of the
// spec's shrinks, the Case itself shrinks by halving rows and columns,
// dropping plan batches and moving values to 0, 1 and small integers.
//
// Files: generators.cpp (edge lists, shapes, the case generator) and
// case_shrinks.cpp; a spec's materialisation is in case/case_spec.h.
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <string>
#include <vector>

#include "../../case/case_spec.h"

namespace gatecheck {

namespace edges {
// rows: empty, tiny, and each side of the power-of-two block thresholds a
// kernel may switch on (CUB's and vLLM's boundary lists, prior art's 257).
const std::vector<int64_t>& rows();
// primes: no power-of-two factor a tiling could hide behind.
const std::vector<int64_t>& prime_rows();
// dim: 1..9 (below any vector width), around 16/32/128/256 (vector and
// warp/block widths), plus the wide dims of big_dims.
const std::vector<int64_t>& dims();
// Wide dims: the models' 3072, 5376 and 8192, and awkward dims past 4,096
// (odd, primes, one past a power of two) up to 16,385, where column-tiled
// kernels break. Drawn only for small row counts, so a case stays cheap.
const std::vector<int64_t>& big_dims();
// gates: 1, 2, 3 and H3's 9; "about rows" and "more than rows" are relative
// and drawn by gen_gates.
const std::vector<int64_t>& gates();
}  // namespace edges

struct GenLimits {
  const OpSchema* op = &gate_residual_schema();  // the op whose cases are drawn
  int64_t min_rows = 0, max_rows = 1100;
  int64_t min_dim = 0, max_dim = 300;
  int64_t min_gates = 0, max_gates = 256;  // a case with rows has at least 1 gate whatever min_gates says
  // Wide dims (edges::big_dims) up to big_dim_max are drawn when rows <=
  // big_dim_max_rows, whatever max_dim says (a lower --max-dim lowers
  // big_dim_max too).
  int64_t big_dim_max_rows = 8;
  int64_t big_dim_max = 16385;
  bool big_dims = true;
  std::vector<DType> dtypes = {DType::bf16, DType::f16, DType::f32};
  std::vector<std::string> index_patterns = all_index_patterns();
  std::vector<std::string> value_classes = all_value_classes();  // and the op's own (generation_limits)
  std::vector<std::string> plan_kinds = all_plan_kinds();
  // At most this many single-row batches in a singletons plan (case_spec.h).
  int64_t max_singletons = kDefaultMaxSingletons;
};

// Limits adjusted so that `property` can be checked non-vacuously (its
// catalog entry's PlanNeed): a plan needs at least 2 rows and 1 column to
// move anything, and a segment to move needs more than one index value.
GenLimits limits_for_property(const std::string& property, const GenLimits& base);

// The pieces, each usable on its own.
rc::Gen<int64_t> gen_rows(const GenLimits& l);
rc::Gen<int64_t> gen_dim(const GenLimits& l, int64_t rows);
rc::Gen<int64_t> gen_gates(const GenLimits& l, int64_t rows, const std::string& pattern);
rc::Gen<CaseSpec> gen_case_spec(const GenLimits& l);

// Simpler variants of c, simplest first: fewer rows, fewer columns, fewer
// plan batches, simpler values. Used as extra RapidCheck shrinks.
std::vector<Case> simpler_cases(const Case& c);

// Generated cases with index_pattern, value_class and plan filled.
rc::Gen<Case> gen_case(const GenLimits& l = {});
// gen_case under limits_for_property, keeping only cases on which `property`
// can be checked non-vacuously (plan_moves_rows) — so a vacuity failure from
// a generated case is a real bug, never bad luck.
rc::Gen<Case> gen_case_for(const std::string& property, const GenLimits& l = {});

// A spec's case without its values: shape, index and plan, which is all that
// plan_moves_rows looks at (so it judges a candidate before its tensors are filled).
Case case_skeleton(const CaseSpec& s, int64_t max_singletons = kDefaultMaxSingletons);

// Does c's plan (or the default plan) move what `property` compares (its
// catalog entry's PlanNeed): some row at a different offset and some row in a
// batch of a different size; or some used index value whose rows all sit in
// one batch, in order.
bool plan_moves_rows(const std::string& property, const Case& c);

// A dim past this is past a tile's or a block's width: coverage reports the
// cases drawn past it (Coverage::wide_dims).
constexpr int64_t kWideDimEdge = 4096;
// The share of cases of at most big_dim_max_rows rows drawn with a wide dim
// (percent), whatever RapidCheck's size.
constexpr int64_t kWideDimPercent = 10;
// A dim from this on is counted, by value, in Coverage::wide_dims.
constexpr int64_t kWideDimCounted = 1000;

// Size classes of a case for coverage statistics: {"rows 10-99", "dim 1-9"}
// (dim's 1000+ split at 4,096: "dim 1000-4096", "dim 4097+").
std::vector<std::string> size_classes(const Case& c);

}  // namespace gatecheck
