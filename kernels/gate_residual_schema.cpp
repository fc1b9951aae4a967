// gate_residual described as data (op_schema.h). The order of the inputs is
// the order of its guarded buffers, of a corpus file's tensors and of the ABI
// v2's descriptors: res, gate, index, y, then grad_out for the backward.
#include "op_schema.h"

namespace gatecheck {

const OpSchema& gate_residual_schema() {
  static const OpSchema s{
      "gate_residual",
      "out = res + gate[index] * y; grad_res = g, grad_y = g * gate[index], "
      "grad_gate[k] = sum over rows with index k of g * y",
      {
          {"res", Role::row, Fill::addend, Pass::forward, nullptr, /*in_backward=*/false},
          {"gate", Role::table, Fill::small_factor},
          {"index", Role::index},
          {"y", Role::row, Fill::factor},
          {"grad_out", Role::row, Fill::upstream, Pass::backward, "out"},
      },
      {
          {"out", Role::row, OutputKind::rowwise, Pass::forward},
          {"grad_res", Role::row, OutputKind::rowwise, Pass::backward, "res"},
          {"grad_y", Role::row, OutputKind::rowwise, Pass::backward, "y"},
          {"grad_gate", Role::table, OutputKind::segment_sum, Pass::backward, "gate"},
      },
      {},
  };
  return s;
}

}  // namespace gatecheck
