// The checks every op's contract shares (op_contract.h).
#include "op_contract.h"

#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <limits>

namespace gatecheck {

std::string string_printf(const char* format, ...) {
  char buf[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buf, sizeof buf, format, args);
  va_end(args);
  return buf;
}

namespace {
// Largest element count whose byte size (4 bytes each) stays addressable in int64.
constexpr int64_t kMaxElements = std::numeric_limits<int64_t>::max() / 8;
}  // namespace

const char* error_kind_name(ErrorKind k) {
  switch (k) {
    case ErrorKind::none: return "none";
    case ErrorKind::index_out_of_range: return "index_out_of_range";
    case ErrorKind::no_gates: return "no_gates";
    case ErrorKind::dtype_mismatch: return "dtype_mismatch";
    case ErrorKind::shape_mismatch: return "shape_mismatch";
    case ErrorKind::null_pointer: return "null_pointer";
    case ErrorKind::unsupported_device: return "unsupported_device";
    case ErrorKind::size_overflow: return "size_overflow";
    case ErrorKind::implementation: return "implementation";
    case ErrorKind::bad_scalar: return "bad_scalar";
  }
  return "unknown";
}

bool parse_dtype(const char* name, DType* out) {
  struct { const char* n; DType t; } table[] = {
      {"f32", DType::f32}, {"fp32", DType::f32}, {"float32", DType::f32},
      {"f16", DType::f16}, {"fp16", DType::f16}, {"float16", DType::f16},
      {"bf16", DType::bf16}, {"bfloat16", DType::bf16}};
  for (auto& e : table)
    if (std::strcmp(name, e.n) == 0) { *out = e.t; return true; }
  return false;
}

int64_t checked_elements(int64_t rows, int64_t dim) {
  if (rows < 0 || dim < 0) return -1;
  if (dim != 0 && rows > kMaxElements / dim) return -1;
  return rows * dim;
}

Status check_problem(const char* op, const gatecheck_problem& p, uint32_t supported_devices) {
  if (p.dtype != GATECHECK_F32 && p.dtype != GATECHECK_F16 && p.dtype != GATECHECK_BF16)
    return Status::error(ErrorKind::dtype_mismatch,
                         string_printf("%s: dtype = %d is not one of f32 (0), f16 (1), bf16 (2)", op, p.dtype));
  if (p.device != GATECHECK_CPU && p.device != GATECHECK_CUDA)
    return Status::error(ErrorKind::unsupported_device,
                         string_printf("%s: device = %d is not cpu (0) or cuda (1)", op, p.device));
  if (!(supported_devices & (1u << p.device)))
    return Status::error(ErrorKind::unsupported_device,
                         string_printf("%s: device = %s is not supported by this implementation", op,
                                       device_name(Device(p.device))));
  if (p.rows < 0)
    return Status::error(ErrorKind::shape_mismatch, string_printf("%s: rows = %" PRId64 " is negative", op, p.rows));
  if (p.dim < 0)
    return Status::error(ErrorKind::shape_mismatch, string_printf("%s: dim = %" PRId64 " is negative", op, p.dim));
  if (p.gates < 0)
    return Status::error(ErrorKind::shape_mismatch, string_printf("%s: gates = %" PRId64 " is negative", op, p.gates));
  if (p.gates == 0 && p.rows > 0)
    return Status::error(ErrorKind::no_gates,
                         string_printf("%s: gates = 0 with rows = %" PRId64 " > 0: every row needs a gate", op,
                                       p.rows));
  if (checked_elements(p.rows, p.dim) < 0)
    return Status::error(ErrorKind::size_overflow,
                         string_printf("%s: rows*dim = %" PRId64 "*%" PRId64 " overflows", op, p.rows, p.dim));
  if (checked_elements(p.gates, p.dim) < 0)
    return Status::error(ErrorKind::size_overflow,
                         string_printf("%s: gates*dim = %" PRId64 "*%" PRId64 " overflows", op, p.gates, p.dim));
  return Status::success();
}

Status check_tensor(const char* op, const gatecheck_problem& p, const TensorArg& t,
                    int64_t expect_rows, int64_t expect_cols) {
  if (int32_t(t.dtype) != p.dtype)
    return Status::error(ErrorKind::dtype_mismatch,
                         string_printf("%s: %s has dtype %s, expected %s", op, t.name, dtype_name(t.dtype),
                                       dtype_name(DType(p.dtype))));
  if (t.rows != expect_rows || t.cols != expect_cols)
    return Status::error(ErrorKind::shape_mismatch,
                         string_printf("%s: %s has shape [%" PRId64 ", %" PRId64 "], expected [%" PRId64
                                       ", %" PRId64 "]",
                                       op, t.name, t.rows, t.cols, expect_rows, expect_cols));
  if (t.row_stride < t.cols)
    return Status::error(ErrorKind::shape_mismatch,
                         string_printf("%s: %s has row stride %" PRId64 " < %" PRId64 " columns", op, t.name,
                                       t.row_stride, t.cols));
  if (t.rows > 0 && t.cols > 0 && t.data == nullptr)
    return Status::error(ErrorKind::null_pointer,
                         string_printf("%s: %s is null but has %" PRId64 "x%" PRId64 " elements", op, t.name,
                                       t.rows, t.cols));
  return Status::success();
}

Status check_index_pointer(const char* op, const gatecheck_problem& p, const int64_t* index) {
  if (p.rows > 0 && index == nullptr)
    return Status::error(ErrorKind::null_pointer,
                         string_printf("%s: index is null but rows = %" PRId64, op, p.rows));
  return Status::success();
}

Status check_index_range(const char* op, const gatecheck_problem& p, const int64_t* index) {
  for (int64_t r = 0; r < p.rows; ++r)
    if (index[r] < 0 || index[r] >= p.gates)
      return Status::error(ErrorKind::index_out_of_range,
                           string_printf("%s: index[%" PRId64 "] = %" PRId64 " is out of range [0, %" PRId64
                                         ") (gates = %" PRId64 ")",
                                         op, r, index[r], p.gates, p.gates));
  return Status::success();
}

Status expand_shared_index(const std::vector<int64_t>& shared, int64_t rows,
                           std::vector<int64_t>* expanded) {
  const int64_t S = int64_t(shared.size());
  if (rows < 0)
    return Status::error(ErrorKind::shape_mismatch,
                         string_printf("expand_shared_index: rows = %" PRId64 " is negative", rows));
  if (S == 0 && rows > 0)
    return Status::error(ErrorKind::shape_mismatch,
                         string_printf("expand_shared_index: index is empty but rows = %" PRId64, rows));
  if (S > 0 && rows % S != 0)
    return Status::error(ErrorKind::shape_mismatch,
                         string_printf("expand_shared_index: rows = %" PRId64 " is not a multiple of the shared "
                                       "index length S = %" PRId64,
                                       rows, S));
  expanded->resize(size_t(rows));
  for (int64_t r = 0; r < rows; ++r) (*expanded)[size_t(r)] = shared[size_t(r % S)];
  return Status::success();
}

}  // namespace gatecheck
