// A Case: one fully specified problem of an op (kernels/op_schema.h) as plain
// data, plus an optional batch plan. Values are held as the raw bits of their
// dtype, so a Case replays bit for bit anywhere (see case_json.h for the file
// format). The op's description says what each tensor is; nothing here names
// one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../kernels/op_schema.h"

namespace gatecheck {

// A dense row-major [rows, cols] tensor of one dtype, stored as raw bytes.
struct HostTensor {
  DType dtype = DType::f32;
  int64_t rows = 0, cols = 0;
  std::vector<uint8_t> bytes;

  HostTensor() = default;
  HostTensor(DType t, int64_t r, int64_t c)
      : dtype(t), rows(r), cols(c), bytes(size_t(r * c * dtype_size(t)), 0) {}

  int64_t numel() const { return rows * cols; }
  void* data() { return bytes.data(); }
  const void* data() const { return bytes.data(); }
  uint32_t bits(int64_t i) const;              // element i's bits (16-bit types in the low bits)
  void set_bits(int64_t i, uint32_t b);
  float value(int64_t i) const { return bits_to_float(dtype, bits(i)); }
  void set_value_rn(int64_t i, float v) { set_bits(i, float_to_bits_rn(dtype, v)); }
  bool operator==(const HostTensor& o) const {
    return dtype == o.dtype && rows == o.rows && cols == o.cols && bytes == o.bytes;
  }
};

// How a batch is re-run to test invariance. Each batch lists rows of the
// Case, in the order they form that sub-batch; a row may appear in several.
// Corpus files may ask for more repeats than the generators make (1-3), but
// not so many that a replay runs for hours.
constexpr int kMaxPlanRepeats = 1000;

struct BatchPlan {
  std::string kind;  // partition, singletons, prior_art, thresholds, probe, permutation, reversal, repeat
  std::vector<std::vector<int64_t>> batches;
  int repeats = 0;   // for kind == repeat: how many extra runs of the whole case
  bool operator==(const BatchPlan& o) const {
    return kind == o.kind && batches == o.batches && repeats == o.repeats;
  }
};

struct Case {
  const OpSchema* op = &gate_residual_schema();
  DType dtype = DType::f32;
  int64_t rows = 0, dim = 0, gates = 0;
  std::vector<int64_t> index;       // [rows]
  std::vector<HostTensor> inputs;   // the op's float inputs in its order (the index is above)
  std::vector<double> scalars;      // the op's scalars in its order
  std::optional<BatchPlan> plan;
  // Where the case came from, for statistics and reports (not semantics).
  std::string index_pattern, value_class;

  // The input the op names `name`; throws std::invalid_argument naming the
  // op's inputs when it has none of that name. For an op's own code (its
  // reference, its implementations, tests), never the engine's.
  const HostTensor& input(std::string_view name) const;
  HostTensor& input(std::string_view name);
  double scalar(std::string_view name) const;
  gatecheck_problem problem(Device d, void* stream = nullptr) const {
    return gatecheck_problem{rows, dim, gates, int32_t(dtype), int32_t(d), stream};
  }
  bool operator==(const Case& o) const;
};

// A Case of op's with the given shape, every value +0, every index 0 and
// every scalar at its default.
Case make_case(const OpSchema& op, DType t, int64_t rows, int64_t dim, int64_t gates);
// The same for gate_residual (tests and gate_residual's own code).
inline Case make_case(DType t, int64_t rows, int64_t dim, int64_t gates) {
  return make_case(gate_residual_schema(), t, rows, dim, gates);
}
// A tensor of role r for c's shape (+0 bits).
HostTensor tensor_for(const Case& c, Role r);

// The rows `rows` of c (in that order) as a Case of their own: row tensors
// and the index gathered, table and column tensors and scalars as they are.
// Used to run sub-batches.
Case sub_case(const Case& c, const std::vector<int64_t>& rows);

// The outputs of forward + backward, in the op's order.
struct Outputs {
  const OpSchema* op = &gate_residual_schema();
  std::vector<HostTensor> tensors;
  // The output the op names `name`; throws std::invalid_argument naming the
  // op's outputs otherwise. (name by value: a `const std::string&` made GCC
  // 13 warn (-Wdangling-reference) at every call with a string literal.)
  const HostTensor& operator[](std::string_view name) const;
  HostTensor& operator[](std::string_view name);
};
// Outputs shaped for c (each by its role), all +0 bits.
Outputs outputs_for(const Case& c);

// The shape rule of every case, and so of every corpus file, JSON or
// snapshot: the contract's check_problem (every row needs a gate, so gates = 0
// with rows > 0 is refused) and the op's smallest dim. Returns its message
// ("case: ..."), or "".
std::string case_shape_problem(const OpSchema& op, int64_t rows, int64_t dim, int64_t gates);

// Why c is not valid input for the operator, in the contract's words
// (check_call: the shape, the scalars, the first index outside [0, gates)),
// or "". The properties check valid input only: bad input is error_inputs'
// own business, made from a valid case.
std::string case_input_problem(const Case& c);

// A one-line description: "bf16 rows=3 dim=5 gates=2 pattern=identity
// values=normal", with the op's scalars ("eps=1e-06") where it has any.
std::string describe(const Case& c);

}  // namespace gatecheck
