// The float64 oracle: exact values of every output, a rigorous per-element
// error bound for a correct implementation in the case's dtype, and a bitwise
// model of torch eager's rounding. The bounds are derived in
// oracle_reference.cpp; the special-value rules are in SEMANTICS.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../case/case.h"

namespace gatecheck {

// What a correct implementation must produce for one element.
struct Expected {
  double value = 0;   // the exact value, evaluated in float64: exact for grad_y
                      // and grad_res; for out and grad_gate exact unless float64
                      // itself rounds, and then its error is part of `bound`
  double bound = 0;   // |got - value| <= bound is correct (finite case)
  // Special-value semantics (see SEMANTICS.md in this folder):
  //   finite             a finite got within bound; when value is a zero and
  //                      bound is 0, the sign of the zero must match too
  //   nan                any NaN (payload not checked)
  //   pos_inf, neg_inf   exactly that Inf
  //   finite_or_inf      a finite got within bound, or the Inf of value's sign
  //                      (the exact value is finite but rounding may overflow)
  //   finite_or_overflow a finite got within bound, or +-Inf, or NaN: fp32
  //                      accumulation of grad_gate may overflow with an outcome
  //                      that depends on the summation order
  //   inf_or_nan         the Inf of value's sign, or NaN: the exact value is
  //                      infinite, but a finite part of it may round to the
  //                      opposite Inf first (out: res = Inf and gate*y overflows
  //                      the dtype; grad_gate: a finite term or partial sum
  //                      overflows fp32), and Inf - Inf is NaN. Found by
  //                      fuzz_gate_residual.
  enum Kind : uint8_t { finite, nan, pos_inf, neg_inf, finite_or_inf, finite_or_overflow, inf_or_nan } kind = finite;
  // When set, got must equal `bits` bit for bit (grad_res is a copy of g:
  // NaN payloads and zero signs included); value/kind still describe it.
  bool bitwise = false;
  // A second outcome the contract allows besides the above (rmsnorm_modulate's
  // rows whose fp32 sum of squares may overflow: rstd = +0 there): got may
  // also be `bits` (a zero of either sign where `bits` is a zero) when or_bits
  // is set, and any NaN when or_nan is set. Neither applies with `bitwise`.
  bool or_bits = false, or_nan = false;
  uint32_t bits = 0;
};
const char* kind_name(Expected::Kind k);

// The oracle's view of one Case: one Expected per element of each output, in
// the op's order.
struct Reference {
  const OpSchema* op = nullptr;
  std::vector<std::vector<Expected>> outputs;
  // One default Expected per element of each of c's outputs.
  static Reference shaped(const Case& c);
  // The output the op names `output`; throws std::invalid_argument otherwise.
  const std::vector<Expected>& operator[](std::string_view output) const;
  std::vector<Expected>& operator[](std::string_view output);
};

// The op's reference (op_oracles.h). Throws std::invalid_argument for a case
// outside the op contract (bad shape, index out of range, a scalar outside
// its domain): the oracle only judges valid problems.
Reference oracle_reference(const Case& c);
void require_valid_case(const char* who, const Case& c);  // the check both use

// The op's bitwise model of torch eager (op_oracles.h says which outputs it
// pins). Throws like oracle_reference, and for an op with no model.
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
  DType dtype = DType::f32;                // of `got`, to print bits at their width
  int64_t cols = 0;                        // to turn flat indices into [row,col]
  bool bitwise = false;                    // compare_bitwise (want is another tensor)
  // Bitwise: what the two sides are, for the evidence. An invariance check
  // names them ("sub-batch" vs "full batch"): neither side is known right.
  std::string got_side = "got", want_side = "want";
  int64_t checked = 0, failed = 0;
  int64_t nan_failed = 0, inf_failed = 0;  // NaN/Inf mismatches counted on their own
  int64_t first_bad = -1, last_bad = -1;   // flat element indices, lowest and highest
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

// ulp of x in the given dtype: 2^(e - p + 1) for the binade [2^e, 2^(e+1))
// that holds |x|, e clamped to the dtype's emin, so subnormals and 0 get the
// subnormal spacing. Beyond the largest finite value the formula is simply
// extended; ulp(+-Inf) = Inf, ulp(NaN) = NaN. Exposed for tests.
double ulp(DType t, double x);

// Every bound is multiplied by this to cover the float64 roundings made while
// evaluating the oracle and comparing (see oracle_reference.cpp, F3).
constexpr double kBoundMargin = 1 + 0x1p-40;

// Helpers the oracle is built from, exposed for tests.
int precision_bits(DType t);               // 24, 11, 8 (significand incl. the hidden bit)
double overflow_threshold(DType t);        // smallest |x| that rounds to Inf: max + ulp(max)/2
bool representable(DType t, double x);     // x is exactly a finite value of dtype t
double gamma_n(int64_t n);                 // n*u/(1 - n*u), u = 2^-24 (fp32); Inf when n*u >= 1

}  // namespace gatecheck
