// Validation of the gate_residual contract, shared by every implementation.
#include "gate_residual.h"


namespace gatecheck {

namespace {
Status check_dense(const char* op, const gatecheck_problem& p, const char* name, const void* data,
                   int64_t rows) {
  return check_tensor(op, p, TensorArg{name, data, DType(p.dtype), rows, p.dim, p.dim}, rows, p.dim);
}
}  // namespace

Status check_fwd_args(const gatecheck_problem& p, const void* res, const void* gate,
                      const int64_t* index, const void* y, const void* out,
                      uint32_t supported_devices, bool index_on_host) {
  const char* op = "gate_residual_fwd";
  Status s = check_problem(op, p, supported_devices);
  if (s.ok()) s = check_dense(op, p, "res", res, p.rows);
  if (s.ok()) s = check_dense(op, p, "gate", gate, p.gates);
  if (s.ok()) s = check_index_pointer(op, p, index);
  if (s.ok()) s = check_dense(op, p, "y", y, p.rows);
  if (s.ok()) s = check_dense(op, p, "out", out, p.rows);
  if (s.ok() && index_on_host) s = check_index_range(op, p, index);
  return s;
}

Status check_bwd_args(const gatecheck_problem& p, const void* grad_out, const void* gate,
                      const int64_t* index, const void* y, const void* grad_res,
                      const void* grad_gate, const void* grad_y, uint32_t supported_devices,
                      bool index_on_host) {
  const char* op = "gate_residual_bwd";
  Status s = check_problem(op, p, supported_devices);
  if (s.ok()) s = check_dense(op, p, "grad_out", grad_out, p.rows);
  if (s.ok()) s = check_dense(op, p, "gate", gate, p.gates);
  if (s.ok()) s = check_index_pointer(op, p, index);
  if (s.ok()) s = check_dense(op, p, "y", y, p.rows);
  if (s.ok()) s = check_dense(op, p, "grad_res", grad_res, p.rows);
  if (s.ok()) s = check_dense(op, p, "grad_gate", grad_gate, p.gates);
  if (s.ok()) s = check_dense(op, p, "grad_y", grad_y, p.rows);
  if (s.ok() && index_on_host) s = check_index_range(op, p, index);
  return s;
}

}  // namespace gatecheck
