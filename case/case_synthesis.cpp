// The named lists and a spec's materialisation (case_spec.h).
#include "case_spec.h"

namespace gatecheck {

// ---- named lists --------------------------------------------------------------

const std::vector<std::string>& all_index_patterns() {
  static const std::vector<std::string> v = {
      "single_gate",      // every row uses one gate: one long segment
      "identity",         // row r uses gate r % gates
      "sorted_equal",     // sorted segments of equal length
      "sorted_random",    // sorted segments of random length
      "reversed",         // sorted segments in descending gate order
      "uniform",          // each row a uniform random gate
      "giant_plus_tiny",  // one giant segment among many tiny ones
      "unused_gates",     // only some gates are used; the rest must get grad_gate 0
      "h3_shared",        // H3: one index of length S tiled across rows/S sequences
      "max_index_heavy",  // most rows use the largest gate id
  };
  return v;
}

const std::vector<std::string>& all_value_classes() {
  static const std::vector<std::string> v = {
      "small_int",        // integers in [-4, 4]: products and sums are exact
      "signed_zero",      // mostly +0 and -0: the sign of zero must come out right
      "normal",           // N(0,1), gate x 0.1 (the prior art's data)
      "mixed_magnitude",  // N(0,1) scaled by 2^k over the dtype's range
      "order_sensitive",  // large cancelling terms among small ones: summation order shows
      "subnormal",        // subnormals and tiny normals
      "near_overflow",    // close to the dtype's largest finite value
      "nan_inf",          // N(0,1) with rare NaN and +-Inf
  };
  return v;
}

std::vector<std::string> value_classes_of(const OpSchema& op) {
  std::vector<std::string> v = all_value_classes();
  v.insert(v.end(), op.extra_value_classes.begin(), op.extra_value_classes.end());
  return v;
}

const std::vector<std::string>& all_plan_kinds() {
  static const std::vector<std::string> v = {
      "singletons",   // rows alone
      "partition",    // random contiguous partition
      "reversal",     // the whole batch reversed, and a reversed prefix
      "permutation",  // the whole batch permuted, and a permuted subset
      "probe",        // a probe row at the front, middle and back of random batches
      "thresholds",   // contiguous sub-batches of 2^k-1, 2^k, 2^k+1 rows
      "prior_art",    // sub-batch sizes 1, 7, 4097, 32768, 65536 scaled to the rows
      "repeat",       // rows repeated inside a batch; whole-case reruns
      "gate_groups",  // each batch: all rows of a group of gates, in row order
  };
  return v;
}

Case make_case_from_spec(const CaseSpec& s, int64_t max_singletons) {
  Case c = make_case(*s.op, s.dtype, s.rows, s.dim, s.gates);
  c.index = make_index(s.index_pattern, s.rows, s.gates, s.index_seed);
  fill_values(&c, s.value_class, s.value_seed);
  c.index_pattern = s.index_pattern;
  c.value_class = s.value_class;
  c.plan = make_plan(s.plan_kind, c, s.plan_seed, max_singletons);
  return c;
}

}  // namespace gatecheck
