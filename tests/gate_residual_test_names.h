// What gate_residual's own tests spell out: its outputs by name, and a call
// of an implementation with its tensors by position (as ABI v1 takes them).
#pragma once

#include "harness/impls/implementation.h"

namespace gatecheck {

inline const char* const kOutputNames[4] = {"out", "grad_res", "grad_y", "grad_gate"};

inline Status forward_gate_residual(const Implementation& impl, const gatecheck_problem& p, const void* res,
                                    const void* gate, const int64_t* index, const void* y, void* out) {
  OpCall c = OpCall::shaped(gate_residual_schema(), Pass::forward, p);
  c.input("res").data = const_cast<void*>(res);
  c.input("gate").data = const_cast<void*>(gate);
  c.input("index").data = const_cast<int64_t*>(index);
  c.input("y").data = const_cast<void*>(y);
  c.output("out").data = out;
  return impl.call(c);
}

}  // namespace gatecheck
