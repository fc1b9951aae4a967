#include "abi_calls.h"

#include "printable_text.h"

#include <string>
#include <vector>

namespace gatecheck {

namespace {

Status from_rc(int rc, const char* (*last_error)(), const char* call, bool ours) {
  if (rc == 0) return Status::success();
  const char* msg = last_error ? last_error() : nullptr;
  if (!ours)  // its text as it is would reach a terminal and a report's JSON
    return Status::error(ErrorKind::implementation,
                         std::string(call) + " returned " + std::to_string(rc) +
                             (msg && *msg ? ": " + printable_text(msg) : std::string(" with no message")));
  std::string m = msg && *msg ? msg : std::string(call) + " returned " + std::to_string(rc) + " with no message";
  const ErrorKind k = (rc > 0 && rc <= int(kLastErrorKind)) ? ErrorKind(rc) : ErrorKind::implementation;
  return Status::error(k, m);
}

gatecheck_tensor descriptor(const char* name, Role role, int32_t dtype, const TensorBuf& b, bool used) {
  gatecheck_tensor t{};
  t.name = name;
  t.dtype = role == Role::index ? GATECHECK_I64 : dtype;
  const bool flat = role == Role::index || role == Role::column;
  t.ndim = flat ? 1 : 2;
  t.shape[0] = role == Role::column ? b.cols : b.rows;
  t.shape[1] = flat ? 0 : b.cols;
  t.data = used ? b.data : nullptr;
  return t;
}

// An OpCall as ABI v2's descriptors (held here while the call runs).
struct AbiCall {
  std::vector<gatecheck_tensor> tensors;
  std::vector<gatecheck_scalar> scalars;
  gatecheck_call call{};
  explicit AbiCall(const OpCall& c) {
    const OpSchema& op = *c.op;
    for (size_t i = 0; i < op.inputs.size(); ++i)
      tensors.push_back(descriptor(op.inputs[i].name, op.inputs[i].role, c.p.dtype, c.inputs[i], c.reads(i)));
    for (size_t i = 0; i < op.outputs.size(); ++i)
      tensors.push_back(descriptor(op.outputs[i].name, op.outputs[i].role, c.p.dtype, c.outputs[i], c.makes(i)));
    for (size_t i = 0; i < op.scalars.size(); ++i) scalars.push_back({op.scalars[i].name, c.scalars[i]});
    call = gatecheck_call{op.name, c.p, int32_t(tensors.size()), tensors.data(), int32_t(scalars.size()),
                          scalars.data()};
  }
};

}  // namespace

Status call_abi_v2(const gatecheck_op_plugin& api, const OpCall& c, bool ours) {
  const AbiCall a(c);
  const bool fwd = c.pass == Pass::forward;
  return from_rc(fwd ? api.forward(&a.call) : api.backward(&a.call), api.last_error, fwd ? "forward" : "backward",
                 ours);
}

Status exchange_partial_v2(const gatecheck_split_exchange& ex, const OpCall& bwd, uint64_t* state, bool ours) {
  const AbiCall a(bwd);
  return from_rc(ex.partial(&a.call, state), ex.last_error, "exchange partial", ours);
}

Status exchange_combine_v2(const gatecheck_split_exchange& ex, const gatecheck_problem& p,
                           const std::vector<const uint64_t*>& states, uint64_t* out, bool ours) {
  return from_rc(ex.combine(&p, states.data(), int32_t(states.size()), out), ex.last_error, "exchange combine", ours);
}

Status exchange_finalize_v2(const gatecheck_split_exchange& ex, const OpCall& bwd, const uint64_t* state, bool ours) {
  const AbiCall a(bwd);
  return from_rc(ex.finalize(&a.call, state), ex.last_error, "exchange finalize", ours);
}

// ABI v1 is gate_residual's: its arguments are that op's tensors by
// position, so this adapter alone names them.
Status call_abi_v1(const gatecheck_plugin& api, const OpCall& c, bool ours) {
  auto in = [&](const char* n) { return c.input(n).data; };
  auto out = [&](const char* n) { return c.output(n).data; };
  const auto* index = static_cast<const int64_t*>(in("index"));
  if (c.pass == Pass::forward)
    return from_rc(api.forward(&c.p, in("res"), in("gate"), index, in("y"), out("out")), api.last_error, "forward", ours);
  return from_rc(api.backward(&c.p, in("grad_out"), in("gate"), index, in("y"), out("grad_res"), out("grad_gate"),
                              out("grad_y")),
                 api.last_error, "backward", ours);
}

}  // namespace gatecheck
