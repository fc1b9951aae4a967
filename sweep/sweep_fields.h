// How the prior art's reports name an op's outputs, read from the op
// catalog so that the sweep never spells a tensor: the forward output's
// error is fwd_rel_err, each gradient's is grad_rel_err.<the input it is the
// gradient of> (gate_residual's res, y, gate), and an operator report's
// rel_error keys are the outputs' own names (rmsnorm_modulate's dx, ...).
#pragma once

#include <string>
#include <vector>

#include "../kernels/op_schema.h"

namespace gatecheck {

struct SeedField {
  size_t output;    // its position in the op's outputs
  std::string key;  // the prior art's key
};

// The first forward output (fwd_rel_err), or -1 when the op has none.
inline int seed_forward_output(const OpSchema& op) {
  for (size_t k = 0; k < op.outputs.size(); ++k)
    if (op.outputs[k].pass == Pass::forward) return int(k);
  return -1;
}

// grad_rel_err's keys, in the op's order: each backward output by the input
// it is the gradient of (by its own name where it is the gradient of none).
inline std::vector<SeedField> seed_grad_fields(const OpSchema& op) {
  std::vector<SeedField> v;
  for (size_t k = 0; k < op.outputs.size(); ++k)
    if (op.outputs[k].pass == Pass::backward)
      v.push_back({k, op.outputs[k].grad_of ? op.outputs[k].grad_of : op.outputs[k].name});
  return v;
}

}  // namespace gatecheck
