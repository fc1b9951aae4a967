// The float64 oracle: exact values of every output, a rigorous per-element
// error bound for a correct implementation in the case's dtype, and a bitwise
// model of torch eager's rounding. Derivations are in oracle_bounds.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../properties/case.h"

namespace gatecheck {

// What a correct implementation must produce for one element.
struct Expected {
  double value = 0;   // exact value (float64; exact for out/grad_y/grad_res, and
                      // for grad_gate up to float64's own rounding, covered by bound)
  double bound = 0;   // |got - value| <= bound is correct (finite case)
  // Special-value semantics (see oracle_semantics.md in this folder):
  enum Kind : uint8_t { finite, nan, pos_inf, neg_inf, finite_or_inf } kind = finite;
};

// The oracle's view of one Case: one Expected per element of each output.
struct Reference {
  std::vector<Expected> out, grad_res, grad_y, grad_gate;
  const std::vector<Expected>& by_name(const std::string& output) const;
};

Reference oracle_reference(const Case& c);

// Bitwise model of torch eager (res + gate.index_select(0, idx) * y, with
// autograd): each product and sum in fp32, rounded to the dtype. grad_gate is
// modelled as a sequential index_add in row order in the dtype (eager's CPU
// order); it is not claimed bitwise by anyone.
Outputs eager_model(const Case& c);

// One bad element, with everything a person needs to act on it.
struct Mismatch {
  std::string tensor;          // "out", "grad_gate", ...
  int64_t row = 0, col = 0;    // element position
  uint32_t got_bits = 0;       // raw bits of the implementation's value
  double got = 0;
  uint32_t want_bits = 0;      // bitwise comparisons: the other side's bits
  double want = 0;             // oracle value, or the other side's value
  double bound = 0;            // accuracy comparisons: the allowed |error|
  std::string why;             // "|err| 3.1e-2 > bound 1.9e-3", "+0 vs -0", "NaN expected"...
};

// The outcome of comparing one tensor.
struct Comparison {
  std::string tensor;
  int64_t checked = 0, failed = 0;
  int64_t nan_failed = 0, inf_failed = 0;  // NaN/Inf mismatches counted on their own
  int64_t first_bad = -1, last_bad = -1;   // flat element indices
  std::vector<Mismatch> first;             // at most kMaxMismatches
  double max_err_over_bound = 0;           // accuracy: max |err|/bound (inf if bound 0 and err > 0)
  bool ok() const { return failed == 0; }
  std::string summary() const;             // a few lines a person can act on
};
constexpr size_t kMaxMismatches = 8;

// Every element of `got` against the oracle, under the special-value semantics.
Comparison compare_accuracy(const std::string& tensor, const HostTensor& got,
                            const std::vector<Expected>& want);

// Bit-for-bit equality: +0 and -0 differ; NaNs compare by bits too unless
// nan_any is set, in which case any NaN matches any NaN (used against the eager
// model, whose NaN payloads are the framework's, not the oracle's).
Comparison compare_bitwise(const std::string& tensor, const HostTensor& got,
                           const HostTensor& want, bool nan_any = false);

// ulp of x in the given dtype (spacing of representable values at |x|;
// for subnormals the subnormal spacing). Exposed for tests.
double ulp(DType t, double x);

}  // namespace gatecheck
