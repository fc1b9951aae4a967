// The oracle catalog (op_oracles.h).
#include "op_oracles.h"

#include "../kernels/rmsnorm_modulate.h"

#include <map>
#include <mutex>
#include <stdexcept>

namespace gatecheck {

// rmsnorm_modulate_reference.cpp, rmsnorm_modulate_eager.cpp
Reference rmsnorm_modulate_reference(const Case& c);
Outputs rmsnorm_modulate_eager_model(const Case& c);
SampledReference rmsnorm_modulate_sampled(const ScaleCase& c, const ScaleSample& s);

namespace {

std::mutex& lock() {
  static std::mutex m;
  return m;
}

std::map<const OpSchema*, OpOracle>& catalog() {
  static std::map<const OpSchema*, OpOracle> c = {
      // eager_exact: out and grad_y are each one elementwise chain of fp32 ops
      // rounded to the dtype; grad_res is a copy. grad_gate is index_add's,
      // whose order is the device's (atomics on CUDA): not pinned.
      {&gate_residual_schema(),
       {gate_residual_reference, gate_residual_eager_model, {"out", "grad_res", "grad_y"},
        "out, grad_res, grad_y: elementwise roundings, on any device", gate_residual_sampled,
        /*exact_at_scale=*/true}},
      // eager_exact pins out only: its statistics in LibTorch's CPU order
      // (rmsnorm_modulate_eager.cpp says which); the gradients are
      // autograd's chains and index_add's sums, not modelled.
      {&rmsnorm_modulate_schema(),
       {rmsnorm_modulate_reference, rmsnorm_modulate_eager_model, {"out"},
        "out only, as LibTorch 1.13 computes it on the CPU: the sum of squares in its cascade order with 8-lane "
        "(AVX2) vectors, one thread a row, rstd = 1/sqrt; not CUDA's (rsqrtf, another order)",
        rmsnorm_modulate_sampled}},
  };
  return c;
}

}  // namespace

const OpOracle* find_op_oracle(const OpSchema& op) {
  const std::lock_guard<std::mutex> l(lock());
  auto it = catalog().find(&op);
  return it == catalog().end() ? nullptr : &it->second;
}

const OpOracle& op_oracle(const OpSchema& op) {
  if (const OpOracle* o = find_op_oracle(op)) return *o;
  throw std::invalid_argument(std::string("the oracle has no reference for op '") + op.name + "'");
}

bool register_op_oracle(const OpSchema& op, const OpOracle& oracle) {
  const std::lock_guard<std::mutex> l(lock());
  return catalog().emplace(&op, oracle).second;
}

}  // namespace gatecheck
