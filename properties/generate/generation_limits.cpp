#include "generation_limits.h"

#include <algorithm>
#include <stdexcept>

namespace gatecheck {

GenLimits generation_limits(const Subject& s, const GenLimits& run) {
  const ValidInputs& v = s.contract.valid;
  GenLimits l = run;
  // The subject's op: its cases, its own value classes, and its smallest dim
  // (drawn for cases without rows too).
  l.op = s.op;
  if (l.value_classes == all_value_classes())
    l.value_classes.insert(l.value_classes.end(), s.op->extra_value_classes.begin(), s.op->extra_value_classes.end());
  l.min_dim = std::max(l.min_dim, s.op->min_dim_with_rows);
  l.max_dim = std::max(l.max_dim, l.min_dim);
  if (!v.narrowed()) return l;
  l.min_rows = std::max(l.min_rows, v.min_rows);
  l.min_dim = std::max(l.min_dim, v.min_dim);
  l.min_gates = std::max(l.min_gates, v.min_gates);
  l.max_rows = std::min(l.max_rows, v.max_rows);
  l.max_dim = std::min(l.max_dim, v.max_dim);
  l.max_gates = std::min(l.max_gates, v.max_gates);
  // Wide dims are drawn for small cases whatever max_dim says: not above
  // the contract's largest dim.
  l.big_dim_max = std::min(l.big_dim_max, v.max_dim);
  l.big_dims = l.big_dims && *std::min_element(edges::big_dims().begin(), edges::big_dims().end()) <= l.big_dim_max;
  auto check = [&](const char* what, int64_t min, int64_t max) {
    if (min > max)
      throw std::invalid_argument(s.label() + "'s valid inputs (" + v.describe() + ") and this run's generator limits leave no " +
                                  what + " to generate (" + what + " from " + std::to_string(min) + " to " +
                                  std::to_string(max) + ")");
  };
  check("rows", l.min_rows, l.max_rows);
  check("dim", l.min_dim, l.max_dim);
  check("gates", l.min_gates, l.max_gates);
  return l;
}

}  // namespace gatecheck
