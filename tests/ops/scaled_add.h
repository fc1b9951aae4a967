// scaled_add, an op defined outside the project's catalog, to prove that a
// new op is additive: a description (its schema), a reference (its oracle
// entry) and implementations, registered at start-up by the program that
// links these files, with no change to the engine, the properties or the
// front ends.
//
//   out = x * w[index] + b                        x, out: [rows, dim]; w: [gates, dim]; b: [dim]
//   grad_x = g * w[index];  grad_w[k] = sum over rows with index k of g * x;  grad_b = sum over rows of g
#pragma once

#include "kernels/op_schema.h"

namespace gatecheck::test_ops {

const OpSchema& scaled_add_schema();

}  // namespace gatecheck::test_ops
