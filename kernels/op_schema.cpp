// The op registry and the generic contract checks of a call (op_schema.h).
#include "op_schema.h"

#include "rmsnorm_modulate.h"

#include <cinttypes>
#include <cmath>
#include <mutex>
#include <stdexcept>

namespace gatecheck {

namespace {

std::mutex& registry_lock() {
  static std::mutex m;
  return m;
}

std::vector<const OpSchema*>& registry() {
  static std::vector<const OpSchema*> ops = {&gate_residual_schema(), &rmsnorm_modulate_schema()};
  return ops;
}

}  // namespace

const char* role_name(Role r) {
  switch (r) {
    case Role::row: return "row";
    case Role::table: return "table";
    case Role::column: return "column";
    case Role::index: return "index";
  }
  return "?";
}

int64_t role_rows(Role r, int64_t rows, int64_t gates) {
  switch (r) {
    case Role::row:
    case Role::index: return rows;
    case Role::table: return gates;
    case Role::column: return 1;
  }
  return 0;
}

int64_t role_cols(Role r, int64_t dim) { return r == Role::index ? 1 : dim; }

const char* pass_name(Pass p) { return p == Pass::forward ? "forward" : "backward"; }

const char* output_kind_name(OutputKind k) {
  switch (k) {
    case OutputKind::rowwise: return "rowwise";
    case OutputKind::segment_sum: return "segment_sum";
    case OutputKind::all_rows_sum: return "all_rows_sum";
  }
  return "?";
}

int OpSchema::input_index(std::string_view n) const {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (n == inputs[i].name) return int(i);
  return -1;
}

int OpSchema::output_index(std::string_view n) const {
  for (size_t i = 0; i < outputs.size(); ++i)
    if (n == outputs[i].name) return int(i);
  return -1;
}

int OpSchema::scalar_index(std::string_view n) const {
  for (size_t i = 0; i < scalars.size(); ++i)
    if (n == scalars[i].name) return int(i);
  return -1;
}

int OpSchema::float_input(std::string_view n) const {
  int k = 0;
  for (const auto& in : inputs) {
    if (in.role == Role::index) continue;
    if (n == in.name) return k;
    ++k;
  }
  return -1;
}

int OpSchema::index_input() const {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].role == Role::index) return int(i);
  return -1;
}

std::vector<int> OpSchema::outputs_of_kind(OutputKind k) const {
  std::vector<int> v;
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i].kind == k) v.push_back(int(i));
  return v;
}

std::string OpSchema::input_list(Pass p) const {
  std::string s;
  for (const auto& in : inputs)
    if (p == Pass::backward || in.pass == Pass::forward) s += (s.empty() ? "" : ", ") + std::string(in.name);
  return s;
}

std::string OpSchema::output_list() const {
  std::string s;
  for (const auto& o : outputs) s += (s.empty() ? "" : ", ") + std::string(o.name);
  return s;
}

const std::vector<const OpSchema*>& op_schemas() {
  const std::lock_guard<std::mutex> lock(registry_lock());
  return registry();
}

const OpSchema* find_op_schema(std::string_view name) {
  for (const OpSchema* s : op_schemas())
    if (name == s->name) return s;
  return nullptr;
}

std::string unknown_op(std::string_view name) {
  std::string known;
  for (const OpSchema* s : op_schemas()) known += (known.empty() ? "" : ", ") + std::string(s->name);
  return "unknown op '" + std::string(name) + "' (" + known + ")";
}

const OpSchema& op_schema(std::string_view name) {
  if (const OpSchema* s = find_op_schema(name)) return *s;
  throw std::invalid_argument(unknown_op(name));
}

bool register_op_schema(const OpSchema* schema) {
  if (find_op_schema(schema->name)) return false;
  const std::lock_guard<std::mutex> lock(registry_lock());
  registry().push_back(schema);
  return true;
}

OpCall OpCall::shaped(const OpSchema& op, Pass pass, const gatecheck_problem& p) {
  OpCall c;
  c.op = &op;
  c.pass = pass;
  c.p = p;
  for (const auto& in : op.inputs)
    c.inputs.push_back({nullptr, role_rows(in.role, p.rows, p.gates), role_cols(in.role, p.dim)});
  for (const auto& out : op.outputs)
    c.outputs.push_back({nullptr, role_rows(out.role, p.rows, p.gates), role_cols(out.role, p.dim)});
  for (const auto& s : op.scalars) c.scalars.push_back(s.default_value);
  return c;
}

namespace {
// bufs[i], i the position of `name` among the op's `kind`s (-1: none).
template <class Bufs>
auto& named_buffer(Bufs& bufs, int i, const OpSchema* op, const char* kind, std::string_view name) {
  if (i < 0 || size_t(i) >= bufs.size())
    throw std::logic_error(std::string(op->name) + " has no " + kind + " '" + std::string(name) + "'");
  return bufs[size_t(i)];
}
}  // namespace

TensorBuf& OpCall::input(std::string_view n) { return named_buffer(inputs, op->input_index(n), op, "input", n); }
const TensorBuf& OpCall::input(std::string_view n) const {
  return named_buffer(inputs, op->input_index(n), op, "input", n);
}
TensorBuf& OpCall::output(std::string_view n) { return named_buffer(outputs, op->output_index(n), op, "output", n); }
const TensorBuf& OpCall::output(std::string_view n) const {
  return named_buffer(outputs, op->output_index(n), op, "output", n);
}

bool OpCall::takes(size_t i) const { return pass == Pass::backward || op->inputs[i].pass == Pass::forward; }
bool OpCall::makes(size_t i) const { return op->outputs[i].pass == pass; }
bool OpCall::reads(size_t i) const {
  return takes(i) && (pass == Pass::forward || op->inputs[i].pass == Pass::backward || op->inputs[i].in_backward);
}

Status check_call(const OpCall& c, uint32_t supported_devices, bool index_on_host) {
  const OpSchema& op = *c.op;
  const std::string who = c.pass == Pass::forward ? op.fwd_name() : op.bwd_name();
  const char* w = who.c_str();
  const gatecheck_problem& p = c.p;
  Status s = check_problem(w, p, supported_devices);
  if (!s.ok()) return s;
  if (p.rows > 0 && p.dim < op.min_dim_with_rows)
    return Status::error(ErrorKind::shape_mismatch,
                         string_printf("%s: dim = %" PRId64 " with rows = %" PRId64 " > 0: %s needs dim >= %" PRId64,
                                       w, p.dim, p.rows, op.name, op.min_dim_with_rows));
  auto check_buf = [&](const char* name, Role role, const TensorBuf& b) {
    const int64_t rows = role_rows(role, p.rows, p.gates), cols = role_cols(role, p.dim);
    if (role == Role::index) {
      if (b.rows != rows) {
        // Which of the two is wrong is the caller's to say: name the rows' tensor too.
        const char* by = "the batch";
        for (const auto& in : op.inputs)
          if (in.role == Role::row) {
            by = in.name;
            break;
          }
        return Status::error(ErrorKind::shape_mismatch,
                             string_printf("%s: index has %" PRId64 " entries, expected %" PRId64 ": one per row of %s",
                                           w, b.rows, rows, by));
      }
      return check_index_pointer(w, p, static_cast<const int64_t*>(b.data));
    }
    return check_tensor(w, p, TensorArg{name, b.data, DType(p.dtype), b.rows, b.cols, b.cols}, rows, cols);
  };
  for (size_t i = 0; i < op.inputs.size(); ++i)
    if (c.reads(i))
      if (s = check_buf(op.inputs[i].name, op.inputs[i].role, c.inputs[i]); !s.ok()) return s;
  for (size_t i = 0; i < op.outputs.size(); ++i)
    if (c.makes(i))
      if (s = check_buf(op.outputs[i].name, op.outputs[i].role, c.outputs[i]); !s.ok()) return s;
  for (size_t i = 0; i < op.scalars.size(); ++i) {
    const double v = i < c.scalars.size() ? c.scalars[i] : std::nan("");
    if (!std::isfinite(v) || (op.scalars[i].positive && !(v > 0)))
      return Status::error(ErrorKind::bad_scalar,
                           string_printf("%s: %s = %g is not %s", w, op.scalars[i].name, v,
                                         op.scalars[i].positive ? "positive and finite" : "finite"));
  }
  if (index_on_host) return check_index_range(w, p, c.index());
  return Status::success();
}

}  // namespace gatecheck
