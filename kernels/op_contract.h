// What every op's contract shares: devices, the kinds of error and the Status
// that carries one, a tensor argument, and the checks of a problem's shape,
// one tensor, and the index. An op's own contract (gate_residual.h,
// rmsnorm_modulate.h) builds on these; op_schema.h describes an op as data.
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
  bad_scalar,          // a scalar argument outside its domain (eps <= 0, NaN, Inf)
};
constexpr ErrorKind kLastErrorKind = ErrorKind::bad_scalar;
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

// The H3 shared-index form: one index of length S shared by every sequence;
// row r uses index[r % S]. Expands it to one entry per row. rows % S must be 0.
Status expand_shared_index(const std::vector<int64_t>& shared, int64_t rows,
                           std::vector<int64_t>* expanded);

// Number of elements rows*dim, or -1 on overflow.
int64_t checked_elements(int64_t rows, int64_t dim);

// printf into a string, for the checks' messages (cut at 511 characters).
std::string string_printf(const char* format, ...) __attribute__((format(printf, 1, 2)));

}  // namespace gatecheck
