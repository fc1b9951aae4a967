#include "case.h"

#include <cstring>
#include <sstream>
#include <stdexcept>

namespace gatecheck {

uint32_t HostTensor::bits(int64_t i) const {
  if (dtype == DType::f32) {
    uint32_t b;
    std::memcpy(&b, bytes.data() + i * 4, 4);
    return b;
  }
  uint16_t h;
  std::memcpy(&h, bytes.data() + i * 2, 2);
  return h;
}

void HostTensor::set_bits(int64_t i, uint32_t b) {
  if (dtype == DType::f32) {
    std::memcpy(bytes.data() + i * 4, &b, 4);
  } else {
    const uint16_t h = uint16_t(b);
    std::memcpy(bytes.data() + i * 2, &h, 2);
  }
}

bool Case::operator==(const Case& o) const {
  return dtype == o.dtype && rows == o.rows && dim == o.dim && gates == o.gates &&
         index == o.index && res == o.res && gate == o.gate && y == o.y && grad_out == o.grad_out &&
         plan == o.plan;
}

Case make_case(DType t, int64_t rows, int64_t dim, int64_t gates) {
  Case c;
  c.dtype = t;
  c.rows = rows;
  c.dim = dim;
  c.gates = gates;
  c.index.assign(size_t(rows), 0);
  c.res = HostTensor(t, rows, dim);
  c.gate = HostTensor(t, gates, dim);
  c.y = HostTensor(t, rows, dim);
  c.grad_out = HostTensor(t, rows, dim);
  return c;
}

Case sub_case(const Case& c, const std::vector<int64_t>& rows) {
  Case s = make_case(c.dtype, int64_t(rows.size()), c.dim, c.gates);
  s.gate = c.gate;
  s.index_pattern = c.index_pattern;
  s.value_class = c.value_class;
  const size_t row_bytes = size_t(c.dim * dtype_size(c.dtype));
  for (size_t i = 0; i < rows.size(); ++i) {
    const int64_t r = rows[i];
    if (r < 0 || r >= c.rows) throw std::out_of_range("sub_case: row " + std::to_string(r) + " out of range");
    s.index[i] = c.index[size_t(r)];
    auto copy_row = [&](HostTensor& dst, const HostTensor& src) {
      if (row_bytes) std::memcpy(dst.bytes.data() + i * row_bytes, src.bytes.data() + size_t(r) * row_bytes, row_bytes);
    };
    copy_row(s.res, c.res);
    copy_row(s.y, c.y);
    copy_row(s.grad_out, c.grad_out);
  }
  return s;
}

Outputs outputs_for(const Case& c) {
  Outputs o;
  o.out = HostTensor(c.dtype, c.rows, c.dim);
  o.grad_res = HostTensor(c.dtype, c.rows, c.dim);
  o.grad_y = HostTensor(c.dtype, c.rows, c.dim);
  o.grad_gate = HostTensor(c.dtype, c.gates, c.dim);
  return o;
}

const HostTensor& output_by_name(const Outputs& o, std::string_view name) {
  if (name == "out") return o.out;
  if (name == "grad_res") return o.grad_res;
  if (name == "grad_y") return o.grad_y;
  if (name == "grad_gate") return o.grad_gate;
  throw std::invalid_argument("unknown output '" + std::string(name) + "' (out, grad_res, grad_y, grad_gate)");
}

// Both are the operator's own contract checks (kernels/gate_residual.h), so a
// case is valid exactly when a call on it would be.
std::string case_shape_problem(int64_t rows, int64_t gates) {
  const gatecheck_problem p{rows, 0, gates, GATECHECK_F32, GATECHECK_CPU, nullptr};
  const Status s = check_problem("case", p, 1u << GATECHECK_CPU);
  return s.ok() ? std::string() : s.message;
}

std::string case_input_problem(const Case& c) {
  const gatecheck_problem p{c.rows, c.dim, c.gates, int32_t(c.dtype), GATECHECK_CPU, nullptr};
  Status s = check_problem("case", p, 1u << GATECHECK_CPU);
  if (s.ok()) s = check_index_range("case", p, c.index.data());
  return s.ok() ? std::string() : s.message;
}

std::string describe(const Case& c) {
  std::ostringstream s;
  s << dtype_name(c.dtype) << " rows=" << c.rows << " dim=" << c.dim << " gates=" << c.gates;
  if (!c.index_pattern.empty()) s << " pattern=" << c.index_pattern;
  if (!c.value_class.empty()) s << " values=" << c.value_class;
  if (c.plan) s << " plan=" << c.plan->kind << "(" << c.plan->batches.size() << " batches)";
  return s.str();
}

}  // namespace gatecheck
