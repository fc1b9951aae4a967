// Each bad input of the op contract, against the host implementation: the
// ErrorKind, a message that names the argument and the bad value, and no
// output written (every output keeps its sentinel).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "contract_test_support.h"
#include "kernels/op_schema.h"

namespace gatecheck::testing {
namespace {

// Both entry points reject the same problem the same way.
void expect_rejected(CallBuffers& b, ErrorKind kind, std::initializer_list<const char*> words) {
  for (bool forward : {true, false}) {
    const Status s = forward ? b.fwd() : b.bwd();
    const char* op = forward ? "gate_residual_fwd" : "gate_residual_bwd";
    EXPECT_EQ(s.kind, kind) << op << ": " << error_kind_name(s.kind) << ": " << s.message;
    EXPECT_NE(s.message.find(op), std::string::npos) << s.message;
    for (const char* w : words) EXPECT_NE(s.message.find(w), std::string::npos) << "'" << w << "' in: " << s.message;
    EXPECT_TRUE(b.nothing_written()) << op << " wrote an output while rejecting: " << s.message;
  }
}

TEST(ContractErrors, IndexOutOfRange) {
  CallBuffers b(4, 3, 3);
  b.index[1] = 3;
  expect_rejected(b, ErrorKind::index_out_of_range, {"index[1] = 3", "[0, 3)"});
}

TEST(ContractErrors, IndexNegative) {
  CallBuffers b(4, 3, 3);
  b.index[2] = -1;
  expect_rejected(b, ErrorKind::index_out_of_range, {"index[2] = -1"});
}

TEST(ContractErrors, IndexFarOutOfRangeIsNotDereferenced) {
  CallBuffers b(4, 3, 3);
  b.index[3] = int64_t(1) << 60;  // would fault if the gate row were read
  expect_rejected(b, ErrorKind::index_out_of_range, {"index[3] = 1152921504606846976"});
}

TEST(ContractErrors, NoGatesWithRows) {
  CallBuffers b(2, 3, 0);
  expect_rejected(b, ErrorKind::no_gates, {"gates = 0", "rows = 2"});
}

TEST(ContractErrors, UnknownDTypeValue) {
  CallBuffers b(2, 3, 1);
  b.p.dtype = 7;
  expect_rejected(b, ErrorKind::dtype_mismatch, {"dtype = 7"});
}

TEST(ContractErrors, TensorDTypeDiffersFromProblem) {
  CallBuffers b(2, 3, 1);
  const TensorArg res{"res", b.res.data(), DType::f16, 2, 3, 3};
  const Status s = check_tensor("gate_residual_fwd", b.p, res, 2, 3);
  EXPECT_EQ(s.kind, ErrorKind::dtype_mismatch);
  EXPECT_NE(s.message.find("res has dtype f16, expected f32"), std::string::npos) << s.message;
}

TEST(ContractErrors, NegativeDimensions) {
  {
    CallBuffers b(-1, 3, 1);
    expect_rejected(b, ErrorKind::shape_mismatch, {"rows = -1"});
  }
  {
    CallBuffers b(2, -2, 1);
    expect_rejected(b, ErrorKind::shape_mismatch, {"dim = -2"});
  }
  {
    CallBuffers b(2, 3, -3);
    expect_rejected(b, ErrorKind::shape_mismatch, {"gates = -3"});
  }
}

TEST(ContractErrors, TensorShapeDiffersFromContract) {
  CallBuffers b(2, 4, 1);
  const TensorArg y{"y", b.y.data(), DType::f32, 3, 4, 4};
  Status s = check_tensor("gate_residual_fwd", b.p, y, 2, 4);
  EXPECT_EQ(s.kind, ErrorKind::shape_mismatch);
  EXPECT_NE(s.message.find("y has shape [3, 4], expected [2, 4]"), std::string::npos) << s.message;
  const TensorArg gate{"gate", b.gate.data(), DType::f32, 1, 4, 2};
  s = check_tensor("gate_residual_fwd", b.p, gate, 1, 4);
  EXPECT_EQ(s.kind, ErrorKind::shape_mismatch);
  EXPECT_NE(s.message.find("gate has row stride 2 < 4"), std::string::npos) << s.message;
}

TEST(ContractErrors, NullPointerWithElements) {
  struct Arg { const char* name; bool forward; std::vector<uint8_t> CallBuffers::*buf; };
  const Arg args[] = {{"res", true, &CallBuffers::res},           {"gate", true, &CallBuffers::gate},
                      {"y", true, &CallBuffers::y},               {"out", true, &CallBuffers::out},
                      {"grad_out", false, &CallBuffers::grad_out}, {"gate", false, &CallBuffers::gate},
                      {"y", false, &CallBuffers::y},              {"grad_res", false, &CallBuffers::grad_res},
                      {"grad_gate", false, &CallBuffers::grad_gate}, {"grad_y", false, &CallBuffers::grad_y}};
  for (const Arg& a : args) {
    CallBuffers b(2, 3, 2);
    (b.*a.buf).clear();  // passed as nullptr
    const Status s = a.forward ? b.fwd() : b.bwd();
    EXPECT_EQ(s.kind, ErrorKind::null_pointer) << a.name << ": " << s.message;
    EXPECT_NE(s.message.find(std::string(a.name) + " is null"), std::string::npos) << s.message;
    EXPECT_NE(s.message.find("2x3 elements"), std::string::npos) << s.message;
    EXPECT_TRUE(b.nothing_written()) << a.name;
  }
  CallBuffers b(2, 3, 2);
  b.index.clear();
  expect_rejected(b, ErrorKind::null_pointer, {"index is null", "rows = 2"});
}

TEST(ContractErrors, UnsupportedDevice) {
  CallBuffers b(2, 3, 1);
  b.p.device = GATECHECK_CUDA;
  expect_rejected(b, ErrorKind::unsupported_device, {"device = cuda", "not supported"});
  b.p.device = 9;
  expect_rejected(b, ErrorKind::unsupported_device, {"device = 9"});
}

TEST(ContractErrors, RowsTimesDimOverflow) {
  CallBuffers b(0, 0, 1);  // no buffers: the sizes below are never allocated
  b.p.rows = int64_t(1) << 62;
  b.p.dim = 4;
  expect_rejected(b, ErrorKind::size_overflow, {"rows*dim = 4611686018427387904*4"});
  b.p.rows = 0;
  b.p.gates = int64_t(1) << 61;
  b.p.dim = 1 << 20;
  expect_rejected(b, ErrorKind::size_overflow, {"gates*dim = 2305843009213693952*1048576"});
  EXPECT_EQ(checked_elements(int64_t(1) << 62, 4), -1);
  EXPECT_EQ(checked_elements(3, 5), 15);
}

// The same rejections come through the plugin ABI with last_error set.
TEST(ContractErrors, ThroughThePluginAbi) {
  const gatecheck_plugin* plugin = gate_residual_host_plugin();
  CallBuffers b(4, 3, 3);
  b.index[0] = 5;
  const int rc = plugin->forward(&b.p, b.res.data(), b.gate.data(), b.index.data(), b.y.data(), b.out.data());
  EXPECT_EQ(rc, int(ErrorKind::index_out_of_range));
  EXPECT_NE(std::string(plugin->last_error()).find("index[0] = 5"), std::string::npos) << plugin->last_error();
  EXPECT_NE(plugin->backward(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr), 0);
  EXPECT_NE(std::string(plugin->last_error()).find("problem is null"), std::string::npos);
  EXPECT_TRUE(b.nothing_written());
}

// An implementation finds its tensors by name: the buffer of that name, and
// a name the op lacks is a logic_error naming both (never a stray index).
TEST(ContractErrors, CallBuffersByName) {
  const gatecheck_problem p{4, 3, 2, GATECHECK_F32, GATECHECK_CPU, nullptr};
  OpCall c = OpCall::shaped(gate_residual_schema(), Pass::backward, p);
  float y = 0, grad_gate = 0;
  c.inputs[size_t(c.op->input_index("y"))].data = &y;
  c.outputs[size_t(c.op->output_index("grad_gate"))].data = &grad_gate;
  EXPECT_EQ(c.input("y").data, &y);
  EXPECT_EQ(c.output("grad_gate").data, &grad_gate);
  EXPECT_EQ(c.output("grad_gate").rows, 2);
  const OpCall& k = c;
  EXPECT_EQ(k.input("y").cols, 3);
  try {
    (void)k.input("x");
    ADD_FAILURE() << "no logic_error for an input gate_residual lacks";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "gate_residual has no input 'x'");
  }
  EXPECT_THROW((void)c.output("y"), std::logic_error);
}

}  // namespace
}  // namespace gatecheck::testing
