// The benchmark's list options: comma lists, and the backward variants
// (--bwd-variants): '+'-joined settings,
// each a GATECHECK_CUDA_TUNING item of the backward (plan=2, tile=3,
// threads=512, ...) or a short name for one (count, piped, t512, ...), so that
// parse_cuda_tuning is the one list of knobs. The short names are those of
// the earlier result files in bench/results.
#pragma once

#include <string>
#include <vector>

#include "../kernels/cuda/gate_residual_cuda.h"

namespace gatecheck {
namespace bench {

// The non-empty items of a comma list.
std::vector<std::string> split_commas(const std::string& s);

// The gatecheck_dtype a --dtypes item names (bf16, fp16 or f16, fp32 or f32),
// or -1: the one list of names, for the check below and the run alike.
int dtype_of(const std::string& name);

// The shape lists (--dtypes, --dims, --rows, --gates, --patterns): true if
// every item is known or a positive number, else false with a message naming
// the option and the item (an unknown dtype or pattern used to run as bf16 or
// random).
bool check_shape_lists(const std::string& dtypes, const std::string& dims, const std::string& rows,
                       const std::string& gates, const std::string& patterns, std::string* err);

struct Variant {
  std::string label;   // as written
  CudaTuning tuning;   // its backward knobs; the others at their defaults
};

// The tuning item a short name stands for (a tuning item stays as it is).
std::string tuning_item(const std::string& setting);

// specs: comma list of variants; when empty, vecs (the older --bwd-vec-bytes,
// a comma list of widths) gives one variant a width. On a bad setting, false
// with a message naming it and its variant.
bool parse_variants(const std::string& specs, const std::string& vecs, std::vector<Variant>* out, std::string* err);

}  // namespace bench
}  // namespace gatecheck
