// scaled_add's host implementation ("host"), through the plugin ABI v2 as any
// C++ implementation of an op may be written: the call as an OpCall
// (kernels/op_call_abi.h), the contract's checks (check_call), then the math
// in fp32 with one rounding a step, the sums in row order.
#include <string>

#include "harness/impls/implementation.h"
#include "kernels/gate_residual_dtype.h"
#include "kernels/op_call_abi.h"
#include "scaled_add.h"

namespace gatecheck::test_ops {

namespace {

thread_local std::string g_error;

int report(const Status& s) {
  if (s.ok()) return 0;
  g_error = s.message;
  return int(s.kind);
}

float load(const TensorBuf& t, DType d, int64_t i) {
  if (d == DType::f32) return static_cast<const float*>(t.data)[i];
  return bits_to_float(d, static_cast<const uint16_t*>(t.data)[i]);
}

void store(const TensorBuf& t, DType d, int64_t i, float v) {
  if (d == DType::f32) static_cast<float*>(t.data)[i] = v;
  else static_cast<uint16_t*>(t.data)[i] = uint16_t(float_to_bits_rn(d, v));
}

// v rounded to the dtype, back in fp32.
float rn(DType d, float v) { return d == DType::f32 ? v : bits_to_float(d, float_to_bits_rn(d, v)); }

int run(const gatecheck_call* raw, Pass pass) {
  const OpSchema& op = scaled_add_schema();
  OpCall c;
  Status s = op_call_from_abi(op, pass, raw, &c);
  if (s.ok()) s = check_call(c, 1u << GATECHECK_CPU, /*index_on_host=*/true);
  if (!s.ok()) return report(s);
  const DType d = DType(c.p.dtype);
  const int64_t rows = c.p.rows, dim = c.p.dim;
  const int64_t* index = c.index();
  auto in = [&](const char* n) { return c.input(n); };
  auto out = [&](const char* n) { return c.output(n); };
  if (pass == Pass::forward) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < dim; ++j) {
        const float prod = rn(d, load(in("x"), d, r * dim + j) * load(in("w"), d, index[r] * dim + j));
        store(out("out"), d, r * dim + j, prod + load(in("b"), d, j));
      }
    return 0;
  }
  std::vector<float> gw(size_t(c.p.gates * dim), 0.0f), gb(size_t(dim), 0.0f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < dim; ++j) {
      const float g = load(in("grad_out"), d, r * dim + j);
      store(out("grad_x"), d, r * dim + j, g * load(in("w"), d, index[r] * dim + j));
      gw[size_t(index[r] * dim + j)] += g * load(in("x"), d, r * dim + j);
      gb[size_t(j)] += g;
    }
  for (size_t i = 0; i < gw.size(); ++i) store(out("grad_w"), d, int64_t(i), gw[i]);
  for (size_t j = 0; j < gb.size(); ++j) store(out("grad_b"), d, int64_t(j), gb[j]);
  return 0;
}

int forward(const gatecheck_call* c) { return run(c, Pass::forward); }
int backward(const gatecheck_call* c) { return run(c, Pass::backward); }
const char* last_error() { return g_error.c_str(); }

const gatecheck_op_plugin kHost{2, "scaled_add host", "scaled_add", 1u << GATECHECK_CPU, forward, backward, last_error};

Implementation make_host(Device) {
  Implementation impl;
  impl.api2 = &kHost;
  impl.thread_safe = true;  // no state between calls; the error message is per thread
  return impl;
}

const bool registered =
    register_builtin_implementation(scaled_add_schema(), BuiltinImplementation{"host", 1u << int(Device::cpu), make_host});

}  // namespace

}  // namespace gatecheck::test_ops
