// The gate_residual op contract: shapes, dtypes, devices and the validation
// every implementation shares. One op name across every layer:
// gate_residual_fwd / gate_residual_bwd.
//
//   res, y, out, grad_out, grad_res, grad_y : [rows, dim]
//   gate, grad_gate                         : [gates, dim] (grad_gate has gate's dtype)
//   index                                   : int64 [rows], each in [0, gates)
//
// rows = 0 or dim = 0 is a valid empty problem; for rows = 0 grad_gate is all
// zeros. Bad input returns a Status naming the argument and the bad value, and
// nothing is written.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gate_residual_dtype.h"
#include "gatecheck_plugin.h"

namespace gatecheck {

enum class Device : int32_t { cpu = 0, cuda = 1 };
inline const char* device_name(Device d) { return d == Device::cpu ? "cpu" : "cuda"; }

// What went wrong, so tests and the error_inputs property can tell rejections apart.
enum class ErrorKind {
  none = 0,
  index_out_of_range,  // index[r] < 0 or >= gates
  no_gates,            // gates == 0 while rows > 0
  dtype_mismatch,      // a tensor's dtype differs from the problem's, or is unknown
  shape_mismatch,      // a tensor's shape differs from the contract, or is negative
  null_pointer,        // a null pointer for a tensor with elements
  unsupported_device,  // a device the implementation does not run on
  size_overflow,       // rows*dim or gates*dim overflows int64 / addressable bytes
  implementation,      // the implementation itself failed (CUDA error, exception, ...)
};
const char* error_kind_name(ErrorKind k);

struct Status {
  ErrorKind kind = ErrorKind::none;
  std::string message;
  bool ok() const { return kind == ErrorKind::none; }
  static Status success() { return {}; }
  static Status error(ErrorKind k, std::string msg) { return {k, std::move(msg)}; }
};

// A 2-D tensor argument as an API caller describes it. row_stride is in
// elements (the gate table may be a strided row view); other tensors are dense.
struct TensorArg {
  const char* name;  // "res", "gate", ... used in error messages
  const void* data;
  DType dtype;
  int64_t rows, cols;
  int64_t row_stride;  // elements between rows; == cols when dense
};

// Validation shared by all implementations. `op` prefixes messages
// ("gate_residual_fwd: ..."). Index contents are checked by
// check_index_range, which reads host memory; device paths check on device.
Status check_problem(const char* op, const gatecheck_problem& p, uint32_t supported_devices);
Status check_tensor(const char* op, const gatecheck_problem& p, const TensorArg& t,
                    int64_t expect_rows, int64_t expect_cols);
Status check_index_pointer(const char* op, const gatecheck_problem& p, const int64_t* index);
Status check_index_range(const char* op, const gatecheck_problem& p, const int64_t* index);

// Full argument checks for the raw (dense, plugin-ABI shaped) entry points.
// Index contents are checked only when index_on_host is true.
Status check_fwd_args(const gatecheck_problem& p, const void* res, const void* gate,
                      const int64_t* index, const void* y, const void* out,
                      uint32_t supported_devices, bool index_on_host);
Status check_bwd_args(const gatecheck_problem& p, const void* grad_out, const void* gate,
                      const int64_t* index, const void* y, const void* grad_res,
                      const void* grad_gate, const void* grad_y, uint32_t supported_devices,
                      bool index_on_host);

// The H3 shared-index form: one index of length S shared by every sequence;
// row r uses index[r % S]. Expands it to one entry per row. rows % S must be 0.
Status expand_shared_index(const std::vector<int64_t>& shared, int64_t rows,
                           std::vector<int64_t>* expanded);

// Number of elements rows*dim, or -1 on overflow.
int64_t checked_elements(int64_t rows, int64_t dim);

}  // namespace gatecheck
