// scaled_add described as data, and registered with the op catalog.
#include "scaled_add.h"

namespace gatecheck::test_ops {

const OpSchema& scaled_add_schema() {
  static const OpSchema s{
      "scaled_add",
      "out = x * w[index] + b; grad_x = g * w[index], grad_w[k] = sum over rows with index k of g * x, "
      "grad_b = sum over rows of g",
      {
          {"x", Role::row, Fill::factor},
          {"w", Role::table, Fill::small_factor},
          {"index", Role::index},
          {"b", Role::column, Fill::addend, Pass::forward, nullptr, /*in_backward=*/false},
          {"grad_out", Role::row, Fill::upstream, Pass::backward, "out"},
      },
      {
          {"out", Role::row, OutputKind::rowwise, Pass::forward},
          {"grad_x", Role::row, OutputKind::rowwise, Pass::backward, "x"},
          {"grad_w", Role::table, OutputKind::segment_sum, Pass::backward, "w"},
          {"grad_b", Role::column, OutputKind::all_rows_sum, Pass::backward, "b"},
      },
      {},
  };
  return s;
}

namespace {
const bool registered = register_op_schema(&scaled_add_schema());
}  // namespace

}  // namespace gatecheck::test_ops
