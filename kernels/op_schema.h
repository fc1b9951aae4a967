// An op described as data, as PyTorch's OpInfo describes one: its tensors
// with their roles, its outputs with their kinds, its scalars and the rules
// its inputs follow. Every layer above reads the description instead of
// naming tensors: a Case holds the inputs in this order, the runner lays out
// one guarded buffer per entry in this order, the properties pick outputs by
// kind, error_inputs derives its bad inputs from the rules, and the plugin
// ABI v2 passes one descriptor per entry, in this order.
//
// Every op here is indexed: row r of the batch uses row index[r] of each
// table tensor. The shape of each tensor follows from its role and the
// problem's rows, dim and gates.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "op_contract.h"

namespace gatecheck {

// The shape of a tensor, by what it is to the batch.
enum class Role : uint8_t {
  row,     // [rows, dim]: one row per row of the batch
  table,   // [gates, dim]: gathered by the index
  column,  // [dim]: shared by every row
  index,   // int64 [rows]: each in [0, gates)
};
const char* role_name(Role r);
// Rows of a tensor of role r (index: rows; column: 1).
int64_t role_rows(Role r, int64_t rows, int64_t gates);
// Columns (dim, or 1 for the index).
int64_t role_cols(Role r, int64_t dim);

// How the value classes fill an input (case/value_classes.cpp), so that a
// class can give each part of a formula its own recipe: order_sensitive, for
// one, makes a factor's terms cancel in a reduction and an addend cancel a
// product.
enum class Fill : uint8_t {
  addend,        // added to a product (res; shift)
  factor,        // multiplied and reduced over rows (y; x)
  small_factor,  // a modulation, N(0, 0.1) in the normal class (gate; scale)
  upstream,      // the incoming gradient
};

// Which call of the op takes or makes a tensor.
enum class Pass : uint8_t { forward, backward };
const char* pass_name(Pass p);

struct OpInput {
  const char* name;
  Role role;
  Fill fill = Fill::factor;  // (ignored for the index)
  Pass pass = Pass::forward;  // forward inputs go to both calls; backward ones (grad_out) to the backward only
  const char* grad_of = nullptr;  // a backward input: the forward output it is the gradient of
  // A forward input the backward reads (as autograd saves it). A C ABI's
  // backward gets the ones it reads; a tensor implementation gets them all.
  bool in_backward = true;
};

// What an output is, which decides the properties that read it.
enum class OutputKind : uint8_t {
  rowwise,       // row r of it depends on row r of the inputs alone: row_invariance
  segment_sum,   // [gates, dim]: a sum over the rows whose index is k: segment_invariance
  all_rows_sum,  // [dim]: a sum over every row of the batch
};
const char* output_kind_name(OutputKind k);

struct OpOutput {
  const char* name;
  Role role;
  OutputKind kind;
  Pass pass;
  const char* grad_of = nullptr;  // a backward output: the forward input it is the gradient of
};

// A scalar argument. Every op's scalars are finite and, where `positive`,
// above zero; a generated case draws them from `typical` or, where
// `relative_to` names a row input, near the mean square of one of its rows
// (for eps: comparable to what it is added to).
struct OpScalar {
  const char* name;
  double default_value;
  bool positive = false;
  std::vector<double> typical = {};
  const char* relative_to = nullptr;
};

// An op's plain part, which its prior art compares bit for bit with a
// library op (RL-Kernel's plain_bitwise_vs_nn_rmsnorm: its kernel without the
// modulation against nn.RMSNorm). Setting each input of `set` to its value
// makes `output` exactly the library op of `args` and `scalar_args` (`exact`
// says why, and when), so any implementation's plain part shows through its
// ordinary forward call.
struct PlainPart {
  const char* field = nullptr;         // the operator report's field; null: the op has no plain part
  const char* library_op = nullptr;    // the op a library runs (kernels/torch/torch_plain_op.h)
  const char* library_name = nullptr;  // how people know it
  std::vector<std::pair<const char*, double>> set = {};  // every element of the input set to the value
  const char* output = nullptr;        // then equal to the library op's result
  std::vector<const char*> args = {};         // the library op's tensors, in its order (float inputs)
  std::vector<const char*> scalar_args = {};  // then its scalars, in its order
  const char* exact = "";              // why output is then exactly the plain op, and when
};

struct OpSchema {
  const char* name;
  const char* summary;              // the formula, one line
  std::vector<OpInput> inputs;      // exactly one of role index
  std::vector<OpOutput> outputs;    // forward outputs first
  std::vector<OpScalar> scalars;
  // The smallest dim a problem with rows may have (a row statistic needs a
  // column); 0: empty rows are valid.
  int64_t min_dim_with_rows = 0;
  // Value classes beyond the common list (case/case_spec.h), for this op's
  // own numerical hazards.
  std::vector<std::string> extra_value_classes = {};
  // The prior art's report of this op (RL-Kernel's RFC #420), which
  // `gatecheck sweep` reproduces: the batch sizes (rows) of its accuracy and
  // latency figures, and whether it is an operator report (h3_operator_report:
  // per-output errors, repeatability, and latency and peak memory per size)
  // rather than the per-provider report of gate_residual (h3_prior_art).
  std::vector<int64_t> prior_art_rows = {4097, 32768};
  bool prior_art_operator_report = false;
  // Its plain part, where the prior art compares one with a library op.
  PlainPart plain = {};

  // Positions by name, -1 when there is none. `float_input` counts the inputs
  // without the index: the position of a tensor in Case::inputs.
  int input_index(std::string_view name) const;
  int output_index(std::string_view name) const;
  int scalar_index(std::string_view name) const;
  int float_input(std::string_view name) const;
  int index_input() const;  // the index's position in `inputs`
  std::vector<int> outputs_of_kind(OutputKind k) const;
  std::string fwd_name() const { return std::string(name) + "_fwd"; }
  std::string bwd_name() const { return std::string(name) + "_bwd"; }
  // "x, w, shift, scale, index" (the inputs of a pass, in order), for messages.
  std::string input_list(Pass p) const;
  std::string output_list() const;
};

// The ops this build knows: the built-in ones, then any registered.
const std::vector<const OpSchema*>& op_schemas();
// The op named `name`, or nullptr.
const OpSchema* find_op_schema(std::string_view name);
// The op named `name`; throws std::invalid_argument with unknown_op's message.
const OpSchema& op_schema(std::string_view name);
// "unknown op 'x' (gate_residual, rmsnorm_modulate)".
std::string unknown_op(std::string_view name);
// Adds an op defined outside this folder (a test's op). The schema must
// outlive the program; false when the name is taken.
bool register_op_schema(const OpSchema* schema);

// The built-in ops, each described next to its contract.
const OpSchema& gate_residual_schema();

// One tensor of a call as the caller hands it: where it is and its extent.
struct TensorBuf {
  void* data = nullptr;
  int64_t rows = 0, cols = 0;
};

// One call of an op: the problem, and one buffer per input and output of the
// schema (the inputs the pass does not take, and the outputs of the other
// pass, are empty). Implementations called with tensors (Python) see each
// extent as given, so error_inputs can hand them shapes that disagree.
struct OpCall {
  const OpSchema* op = nullptr;
  Pass pass = Pass::forward;
  gatecheck_problem p{};
  std::vector<TensorBuf> inputs;   // op->inputs order (the index among them)
  std::vector<TensorBuf> outputs;  // op->outputs order
  std::vector<double> scalars;     // op->scalars order
  const int64_t* index() const { return static_cast<const int64_t*>(inputs[size_t(op->index_input())].data); }
  // The buffer of the op's input or output `name`. A name the op lacks is a
  // mistake in the caller's code: std::logic_error naming the op and `name`.
  TensorBuf& input(std::string_view name);
  const TensorBuf& input(std::string_view name) const;
  TensorBuf& output(std::string_view name);
  const TensorBuf& output(std::string_view name) const;
  // A call of `pass` with every extent as the contract says for p, no data.
  static OpCall shaped(const OpSchema& op, Pass pass, const gatecheck_problem& p);
  // Does the pass take input i (a backward call takes every input: what a
  // tensor implementation receives) / make output i?
  bool takes(size_t i) const;
  // Does the pass read input i: takes it and, for the backward, the op's
  // backward reads it (OpInput::in_backward). What a C ABI receives.
  bool reads(size_t i) const;
  bool makes(size_t i) const;
};

// The contract's checks of a call, for any op: the problem (check_problem),
// dim against min_dim_with_rows, each buffer of the pass (shape, then null
// pointer), the scalars (finite; positive where the op says), and, when
// index_on_host, every index within [0, gates). Messages lead with
// "<op>_fwd: " or "<op>_bwd: " and name the argument and its value.
Status check_call(const OpCall& c, uint32_t supported_devices, bool index_on_host);

}  // namespace gatecheck
