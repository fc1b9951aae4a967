// A scale-tier case: a problem of any op (op_schema.h) too large to hold as host
// tensors (up to past 2^31 elements), described by a small spec. Its index
// and batch plan are materialised on the host (8 bytes a row); its values
// never are: each element is scale_values.h's function of its position in the
// generated case, so the harness generates them where the implementation runs
// (on the device for CUDA) and the checks recompute any of them.
//
// A ScaleView narrows the generated case to kept rows, columns and gates (the
// shrinker's edits, properties/shrink_scale.h); every kept element keeps the
// value of its original position, so a shrunk case is still its spec plus a
// view, and replays from a small file (case_json.h). Small enough, it becomes
// an ordinary Case with explicit values (materialise).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "case.h"
#include "scale_values.h"

namespace gatecheck {

// Index patterns drawn at scale: all_index_patterns() plus these.
//   long_segment: one gate holds `segment` consecutive rows at a random offset,
//                 the other rows a uniform random gate among the rest.
const std::vector<std::string>& scale_only_index_patterns();
bool is_scale_index_pattern(const std::string& p);

const char* scale_values_name(ScaleValues v);               // "exact", "rounding", "cancelling"
bool parse_scale_values(const std::string& s, ScaleValues* out);

struct ScaleSpec {
  const OpSchema* op = &gate_residual_schema();  // whose tensors the values fill, by role
  std::vector<double> scalars;                    // the op's scalars in its order (empty: none)
  DType dtype = DType::bf16;
  int64_t rows = 0, dim = 0, gates = 0;
  std::string index_pattern = "uniform";
  int64_t segment = 0;  // long_segment: rows of the long segment
  uint64_t index_seed = 0;
  ScaleValues values = ScaleValues::rounding;
  int32_t value_bound = 0, frac_bits = 0;  // exact values: |k| <= value_bound, k * 2^-frac_bits
  uint64_t value_seed = 0;
  std::string plan_kind = "partition";
  uint64_t plan_seed = 0;
  std::string rung;  // the edge of the scale ladder it was drawn for (reports and coverage only)
  // The cancelling values' large terms go to the op's first row factor (y; x).
  ValueRule rule() const;
  bool operator==(const ScaleSpec& o) const;
};

// Which part of the generated case is kept. Empty vectors mean "all, in order".
struct ScaleView {
  std::vector<int64_t> rows;   // original row of each kept row, ascending
  std::vector<int64_t> cols;   // original column of each kept column, ascending
  std::vector<int64_t> gates;  // original gate whose values each kept gate holds
  std::vector<int64_t> remap;  // per original gate: the kept gate its rows use (-1: none kept); merges share one
  bool all_batches = true;     // else only `batches` (numbers in the spec's plan) are kept
  std::vector<int64_t> batches;
  bool no_plan = false;        // the plan was dropped: the properties' default plan applies
  bool operator==(const ScaleView& o) const;
};

struct ScaleCase {
  ScaleSpec spec;
  ScaleView view;
  DType dtype = DType::bf16;
  int64_t rows = 0, dim = 0, gates = 0;  // of the view
  std::vector<int64_t> index;            // [rows], gates of the view
  std::optional<BatchPlan> plan;         // over the view's rows

  int64_t orig_row(int64_t r) const { return view.rows.empty() ? r : view.rows[size_t(r)]; }
  int64_t orig_col(int64_t c) const { return view.cols.empty() ? c : view.cols[size_t(c)]; }
  int64_t orig_gate(int64_t k) const { return view.gates.empty() ? k : view.gates[size_t(k)]; }
  // Positions in the generated case, which the values are a function of.
  uint64_t row_pos(int64_t r, int64_t c) const { return uint64_t(orig_row(r)) * uint64_t(spec.dim) + uint64_t(orig_col(c)); }
  uint64_t gate_pos(int64_t k, int64_t c) const { return uint64_t(orig_gate(k)) * uint64_t(spec.dim) + uint64_t(orig_col(c)); }
  const OpSchema& op() const { return *spec.op; }
  // Where element (row, col) of float input k (Case::inputs order) was
  // generated: row tensors by (row, col), table tensors by (gate, col),
  // column tensors by col alone (`row` ignored).
  uint64_t input_pos(size_t k, int64_t row, int64_t col) const;
  Role input_role(size_t k) const;
  // Element bits of float input k.
  uint32_t input_bits(size_t k, int64_t row, int64_t col) const {
    return scale_bits(dtype, spec.rule(), scale_tensor_of_input(k), input_pos(k, row, col));
  }
  double input_value(size_t k, int64_t row, int64_t col) const;
  // Element bits by generated tensor (t = scale_tensor_of_input(k)).
  uint32_t bits(ScaleTensor t, int64_t row_or_gate, int64_t col) const { return input_bits(size_t(t) - 1, row_or_gate, col); }
  int64_t elements() const { return rows * dim; }
  // A Case with the same rows, gates and index but no columns (the plan and
  // movement functions need only those).
  Case shadow() const;
};

class Prng;
// Draws s's scalars for its op (its rows, dim, dtype and values set):
// scale_scalars.cpp. An op without scalars leaves them empty.
void draw_scale_scalars(ScaleSpec* s, Prng& rng);

// The index of the generated case (standard and scale-only patterns).
std::vector<int64_t> make_scale_index(const ScaleSpec& s);
// Materialises spec + view: index and plan (never the values). Throws
// std::invalid_argument on an inconsistent spec or view.
ScaleCase make_scale_case(const ScaleSpec& s, const ScaleView& v = {},
                          int64_t max_singletons = 64);
// What is wrong with spec + view (names the field), or "".
std::string scale_spec_problem(const ScaleSpec& s, const ScaleView& v = {});

// The rows of the most used gate: grad_gate sums that many terms.
int64_t longest_segment(const std::vector<int64_t>& index, int64_t gates);

// Exact values: the largest bound K such that values k * 2^-m (|k| <= K)
// make every output exact by construction with at most `segment` rows a gate:
//   products gate*y and g*gate exact in T:  K*K <= 2^p      (p: T's precision)
//   out = res + gate*y exact in T:          K*2^m + K*K <= 2^p (in units of 2^-2m)
//   grad_gate's fp32 partial sums exact in any order: segment*K*K <= 2^24
//     (every partial sum is an integer multiple of 2^-2m no larger than the
//     sum of |terms|; fp32 holds every integer up to 2^24); the result is
//     then RN_T(exact sum), whatever the order.
// 0 when no K >= 1 qualifies (then only zeros would be exact).
int32_t exact_value_bound(DType t, int32_t frac_bits, int64_t segment);
// "" when c's exact values keep those conditions, else which one fails.
std::string exact_values_problem(const ScaleCase& c);

// A plain Case with c's values (for small views: the ordinary properties,
// shrinker and corpus format take over). Throws past kMaxMaterialiseElements.
constexpr int64_t kMaxMaterialiseElements = int64_t(1) << 24;
Case materialise(const ScaleCase& c);

// Bytes a run holds where the implementation runs: the op's inputs (the
// index among them), and `output_sets` sets of its outputs.
uint64_t scale_case_bytes(const OpSchema& op, DType t, int64_t rows, int64_t dim, int64_t gates, int output_sets);
inline uint64_t scale_case_bytes(DType t, int64_t rows, int64_t dim, int64_t gates, int output_sets) {
  return scale_case_bytes(gate_residual_schema(), t, rows, dim, gates, output_sets);
}

// "bf16 rows=699100 dim=3072 gates=9 pattern=uniform values=exact(|k|<=4) plan=probe [rung]"; a
// narrowed (shrunk) case is tagged by its own size (scale_size_tag), naming the rung it was drawn for.
std::string describe(const ScaleCase& c);
// The size class of rows x dim, by the scale ladder's edges: "past 2^31
// elements", "past 65,535 rows", "at least 65,535 x 256 elements", "under ...".
std::string scale_size_tag(int64_t rows, int64_t dim);
// A stable content hash (hex) of spec + view, for file names (an op other
// than gate_residual, and its scalars, are part of it).
std::string scale_digest(const ScaleSpec& s, const ScaleView& v);
inline std::string scale_digest(const ScaleCase& c) { return scale_digest(c.spec, c.view); }

}  // namespace gatecheck
