// Hand-made broken implementations for the "each property can fail" tests:
// each is a gatecheck_plugin wrapping the host twin with one planted bug.
// (The mutant suite with its bug classes lives in properties/mutants/; these
// are the minimum each property needs to prove it fails.)
#pragma once

#include <string>

#include "properties/catalog/contract.h"

namespace gatecheck::testing {

enum class Bug {
  out_off_by_much,        // accuracy: one element of out far off
  odd_batch_flip,         // row_invariance: out row 0 differs when rows is odd
  small_batch_grad_gate,  // segment_invariance: grad_gate differs for batches under 3 rows
  flaky_grad_gate,        // repeatable: grad_gate flips a bit every other call
  writes_y,               // inputs_untouched: backward writes into y
  skips_last_grad_y,      // full_write: last element of grad_y never written
  writes_past_out,        // no_oob_write: one element written after out
  accepts_bad_index,      // error_inputs: an out-of-range index is clamped, not rejected
  vague_errors,           // error_inputs: rejects, but the message names nothing
  fused_forward,          // eager_exact: out with one rounding (fp32 fma), not eager's two
  crashes_on_bad_index,   // error_inputs: reads gate[index] unchecked, and dies (SIGSEGV) on a bad one
  crashes_always,         // any property under isolation: forward dies on every call
};

// The broken implementation, named "broken:<bug>", claiming the default set
// and eager_exact (the host twin it wraps follows the eager rounding model).
Subject broken(Bug bug);
const char* bug_name(Bug bug);

}  // namespace gatecheck::testing
