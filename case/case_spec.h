// A generated Case described by a small spec: shape, dtype, a named index
// pattern, a named value class, a named batch-plan kind and three seeds. The
// spec materialises deterministically (same spec, same Case, bit for bit), so
// a large case can be stored as its spec (case_json.h) and replay anywhere.
// RapidCheck draws and shrinks specs (properties/generators.h); the
// materialisation lives here, below every user of a Case.
//
// Files: case_synthesis.cpp (the lists and make_case_from_spec),
// index_patterns.cpp, value_classes.cpp, batch_plans.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "case.h"

namespace gatecheck {

// Named lists, in the order RapidCheck shrinks them (simplest first).
const std::vector<std::string>& all_index_patterns();
const std::vector<std::string>& all_value_classes();  // every op's
// The value classes drawn for op: every op's, then its own.
std::vector<std::string> value_classes_of(const OpSchema& op);
const std::vector<std::string>& all_plan_kinds();

struct CaseSpec {
  const OpSchema* op = &gate_residual_schema();
  DType dtype = DType::f32;
  int64_t rows = 0, dim = 0, gates = 0;
  std::string index_pattern = "uniform", value_class = "normal", plan_kind = "partition";
  uint64_t index_seed = 0, value_seed = 0, plan_seed = 0;
};

// At most this many single-row batches in a singletons plan by default (the
// rest of the rows are covered by other plan kinds; this keeps a case's cost
// linear).
constexpr int64_t kDefaultMaxSingletons = 64;

// Materialises a spec, deterministically.
Case make_case_from_spec(const CaseSpec& s, int64_t max_singletons = kDefaultMaxSingletons);

// The pieces, each usable on its own.
// Index vector of `pattern` for rows/gates (pattern names: all_index_patterns()).
std::vector<int64_t> make_index(const std::string& pattern, int64_t rows, int64_t gates, uint64_t seed);
// Fills c's inputs with value class `cls` (each by its Fill) and draws its
// scalars.
void fill_values(Case* c, const std::string& cls, uint64_t seed);
// A batch plan of `kind` over c's rows (kinds: all_plan_kinds()).
BatchPlan make_plan(const std::string& kind, const Case& c, uint64_t seed,
                    int64_t max_singletons = kDefaultMaxSingletons);

// The plan used when a Case carries none: deterministic, from the shape alone.
BatchPlan default_plan(const Case& c);

// Splits: plans whose batches are disjoint parts covering the rows (ranks of
// a data-parallel step, micro-batches), for split_invariance. Not among
// all_plan_kinds(): only that property draws them.
constexpr int64_t kMaxSplitParts = 64;
const std::vector<std::string>& split_plan_kinds();
bool is_split_kind(const std::string& kind);
// The split used when a case carries none: two contiguous halves.
BatchPlan default_split(const Case& c);

}  // namespace gatecheck
