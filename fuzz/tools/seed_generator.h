// Seed inputs for the fuzz targets, made deterministically: decoder inputs of
// each op covering every index pattern x dtype, every value class (the op's
// own too) and plan kind, and
// corpus-file inputs (valid files of each dtype, a generator spec, and
// classic corruptions). fuzz/make_seeds.sh names them by sha1.
#pragma once

#include <string>

namespace gatecheck::fuzz {

// Writes seeds into dir/fuzz_OP/ for each op of the catalog (op_schemas())
// and dir/fuzz_corpus_file/; returns how many.
int write_seeds(const std::string& dir);

}  // namespace gatecheck::fuzz
