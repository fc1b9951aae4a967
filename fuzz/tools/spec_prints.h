// Fingerprints of the cases that a grid of specs materialises to
// (make_case_from_spec): every op's index patterns x value classes x plan and
// split kinds, three dtypes, two shapes. One line a family; then one a
// decoder input of `input_dirs` and op (decode_case: the shape, the spec and
// the patches drawn from the input's bytes). Two builds that
// print the same lines make the same cases from the same seeds, as a corpus
// spec, a fuzz input or a RapidCheck replay assumes: the libFuzzer build
// (clang) and the CLI (g++) among them (tests/fuzz: fuzz_builds_make_the_same_cases).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace gatecheck::fuzz {

// Writes "op pattern kind class fingerprint" lines, sorted, then "decode op
// file fingerprint" for each file under input_dirs (sorted); returns how many.
int write_spec_prints(std::ostream& out, const std::vector<std::string>& input_dirs = {});

}  // namespace gatecheck::fuzz
