#include "op_call_abi.h"

#include <cstring>
#include <string>

namespace gatecheck {

Status op_call_from_abi(const OpSchema& op, Pass pass, const gatecheck_call* c, OpCall* out) {
  const std::string who = pass == Pass::forward ? op.fwd_name() : op.bwd_name();
  auto bad = [&](ErrorKind k, const std::string& what) { return Status::error(k, who + ": " + what); };
  if (!c) return bad(ErrorKind::null_pointer, "call is null");
  if (!c->op || std::strcmp(c->op, op.name) != 0)
    return bad(ErrorKind::implementation, std::string("a call of '") + (c->op ? c->op : "(none)") + "', not " + op.name);
  const size_t want = op.inputs.size() + op.outputs.size();
  if (c->num_tensors != int32_t(want) || (want && !c->tensors))
    return bad(ErrorKind::shape_mismatch, std::to_string(c->num_tensors) + " tensors, " + op.name + " has " +
                                              std::to_string(want));
  if (c->num_scalars != int32_t(op.scalars.size()) || (!op.scalars.empty() && !c->scalars))
    return bad(ErrorKind::bad_scalar, std::to_string(c->num_scalars) + " scalars, " + op.name + " has " +
                                          std::to_string(op.scalars.size()));
  *out = OpCall::shaped(op, pass, c->problem);
  for (size_t i = 0; i < want; ++i) {
    const gatecheck_tensor& t = c->tensors[i];
    const bool is_input = i < op.inputs.size();
    const char* name = is_input ? op.inputs[i].name : op.outputs[i - op.inputs.size()].name;
    const Role role = is_input ? op.inputs[i].role : op.outputs[i - op.inputs.size()].role;
    if (!t.name || std::strcmp(t.name, name) != 0)
      return bad(ErrorKind::shape_mismatch, "tensor " + std::to_string(i) + " is '" + (t.name ? t.name : "(none)") +
                                                "', " + op.name + " has " + name + " there");
    const int32_t dtype = role == Role::index ? GATECHECK_I64 : c->problem.dtype;
    if (t.data && t.dtype != dtype)
      return bad(ErrorKind::dtype_mismatch, std::string(name) + " has dtype " + std::to_string(t.dtype) +
                                                 ", expected " + std::to_string(dtype));
    const bool flat = t.ndim == 1;
    TensorBuf b{t.data, role == Role::column ? 1 : t.shape[0], flat ? (role == Role::column ? t.shape[0] : 1) : t.shape[1]};
    (is_input ? out->inputs[i] : out->outputs[i - op.inputs.size()]) = b;
  }
  for (size_t s = 0; s < op.scalars.size(); ++s) {
    if (!c->scalars[s].name || std::strcmp(c->scalars[s].name, op.scalars[s].name) != 0)
      return bad(ErrorKind::bad_scalar, std::string("scalar ") + std::to_string(s) + " is not " + op.scalars[s].name);
    out->scalars[s] = c->scalars[s].value;
  }
  return Status::success();
}

}  // namespace gatecheck
