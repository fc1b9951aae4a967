#include "case.h"

#include <cmath>
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

namespace {
[[noreturn]] void no_such(const OpSchema& op, const char* what, std::string_view name, const std::string& known) {
  throw std::invalid_argument(std::string(op.name) + " has no " + what + " '" + std::string(name) + "' (" + known + ")");
}
std::string float_input_list(const OpSchema& op) {
  std::string s;
  for (const auto& in : op.inputs)
    if (in.role != Role::index) s += (s.empty() ? "" : ", ") + std::string(in.name);
  return s;
}
}  // namespace

const HostTensor& Case::input(std::string_view name) const {
  const int k = op->float_input(name);
  if (k < 0) no_such(*op, "input", name, float_input_list(*op));
  return inputs[size_t(k)];
}

HostTensor& Case::input(std::string_view name) {
  return const_cast<HostTensor&>(static_cast<const Case&>(*this).input(name));
}

double Case::scalar(std::string_view name) const {
  const int k = op->scalar_index(name);
  if (k < 0) {
    std::string known;
    for (const auto& s : op->scalars) known += (known.empty() ? "" : ", ") + std::string(s.name);
    no_such(*op, "scalar", name, known);
  }
  return scalars[size_t(k)];
}

bool Case::operator==(const Case& o) const {
  return op == o.op && dtype == o.dtype && rows == o.rows && dim == o.dim && gates == o.gates && index == o.index &&
         inputs == o.inputs && scalars == o.scalars && plan == o.plan;
}

HostTensor tensor_for(const Case& c, Role r) {
  return HostTensor(c.dtype, role_rows(r, c.rows, c.gates), role_cols(r, c.dim));
}

Case make_case(const OpSchema& op, DType t, int64_t rows, int64_t dim, int64_t gates) {
  Case c;
  c.op = &op;
  c.dtype = t;
  c.rows = rows;
  c.dim = dim;
  c.gates = gates;
  c.index.assign(size_t(rows), 0);
  for (const auto& in : op.inputs)
    if (in.role != Role::index) c.inputs.push_back(tensor_for(c, in.role));
  for (const auto& s : op.scalars) c.scalars.push_back(s.default_value);
  return c;
}

Case sub_case(const Case& c, const std::vector<int64_t>& rows) {
  Case s = make_case(*c.op, c.dtype, int64_t(rows.size()), c.dim, c.gates);
  s.scalars = c.scalars;
  s.index_pattern = c.index_pattern;
  s.value_class = c.value_class;
  size_t k = 0;
  for (const auto& in : c.op->inputs) {
    if (in.role == Role::index) continue;
    if (in.role != Role::row) s.inputs[k] = c.inputs[k];  // table and column tensors: the whole of them
    ++k;
  }
  const size_t row_bytes = size_t(c.dim * dtype_size(c.dtype));
  for (size_t i = 0; i < rows.size(); ++i) {
    const int64_t r = rows[i];
    if (r < 0 || r >= c.rows) throw std::out_of_range("sub_case: row " + std::to_string(r) + " out of range");
    s.index[i] = c.index[size_t(r)];
    if (!row_bytes) continue;
    k = 0;
    for (const auto& in : c.op->inputs) {
      if (in.role == Role::index) continue;
      if (in.role == Role::row)
        std::memcpy(s.inputs[k].bytes.data() + i * row_bytes, c.inputs[k].bytes.data() + size_t(r) * row_bytes,
                    row_bytes);
      ++k;
    }
  }
  return s;
}

Outputs outputs_for(const Case& c) {
  Outputs o;
  o.op = c.op;
  for (const auto& out : c.op->outputs) o.tensors.push_back(tensor_for(c, out.role));
  return o;
}

const HostTensor& Outputs::operator[](std::string_view name) const {
  const int k = op->output_index(name);
  if (k < 0) no_such(*op, "output", name, op->output_list());
  return tensors[size_t(k)];
}

HostTensor& Outputs::operator[](std::string_view name) {
  return const_cast<HostTensor&>(static_cast<const Outputs&>(*this)[name]);
}

// Both are the operator's own contract checks (kernels/op_schema.h), so a
// case is valid exactly when a call on it would be.
std::string case_shape_problem(const OpSchema& op, int64_t rows, int64_t dim, int64_t gates) {
  OpCall call = OpCall::shaped(op, Pass::forward, gatecheck_problem{rows, dim, gates, GATECHECK_F32, GATECHECK_CPU, nullptr});
  const Status s = check_problem("case", call.p, 1u << GATECHECK_CPU);
  if (!s.ok()) return s.message;
  if (rows > 0 && dim < op.min_dim_with_rows)
    return "case: dim = " + std::to_string(dim) + " with rows = " + std::to_string(rows) + " > 0: " + op.name +
           " needs dim >= " + std::to_string(op.min_dim_with_rows);
  return "";
}

std::string case_input_problem(const Case& c) {
  if (std::string why = case_shape_problem(*c.op, c.rows, c.dim, c.gates); !why.empty()) return why;
  const gatecheck_problem p{c.rows, c.dim, c.gates, int32_t(c.dtype), GATECHECK_CPU, nullptr};
  for (size_t i = 0; i < c.op->scalars.size(); ++i) {
    const double v = c.scalars[i];
    if (!std::isfinite(v) || (c.op->scalars[i].positive && !(v > 0))) {
      std::ostringstream s;
      s << "case: " << c.op->scalars[i].name << " = " << v << " is not "
        << (c.op->scalars[i].positive ? "positive and finite" : "finite");
      return s.str();
    }
  }
  const Status s = check_index_range("case", p, c.index.data());
  return s.ok() ? std::string() : s.message;
}

std::string describe(const Case& c) {
  std::ostringstream s;
  s << dtype_name(c.dtype) << " rows=" << c.rows << " dim=" << c.dim << " gates=" << c.gates;
  for (size_t i = 0; i < c.op->scalars.size(); ++i) s << " " << c.op->scalars[i].name << "=" << c.scalars[i];
  if (!c.index_pattern.empty()) s << " pattern=" << c.index_pattern;
  if (!c.value_class.empty()) s << " values=" << c.value_class;
  if (c.plan) s << " plan=" << c.plan->kind << "(" << c.plan->batches.size() << " batches)";
  return s.str();
}

}  // namespace gatecheck
