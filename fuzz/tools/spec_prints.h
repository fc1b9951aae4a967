// Fingerprints of the cases that a grid of specs materialises to
// (make_case_from_spec): every op's index patterns x value classes x plan and
// split kinds, three dtypes, two shapes. One line a family. Two builds that
// print the same lines make the same cases from the same seeds, as a corpus
// spec, a fuzz input or a RapidCheck replay assumes: the libFuzzer build
// (clang) and the CLI (g++) among them (tests/fuzz: fuzz_builds_make_the_same_cases).
#pragma once

#include <ostream>

namespace gatecheck::fuzz {

// Writes "op pattern kind class fingerprint" lines, sorted; returns how many.
int write_spec_prints(std::ostream& out);

}  // namespace gatecheck::fuzz
