// Bug class: skipped row. The forward processes rows in pairs and computes the
// number of pairs as rows / 2, so with an odd row count the last row of `out`
// is never written.
// Caught by: full_write (the last row still holds the poison), and accuracy.
#include "mutant_abi.h"
#include "mutants.h"

namespace gatecheck::mutants {
namespace {

struct SkippedRow : HostTwin {
  static constexpr const char* kName = "mutant:skipped-row";
  static Status forward(const gatecheck_problem& p, const void* res, const void* gate,
                        const int64_t* index, const void* y, void* out) {
    Status s = check_fwd_args(p, res, gate, index, y, out, kCpuOnly, /*index_on_host=*/true);
    if (!s.ok()) return s;
    gatecheck_problem pairs = p;
    pairs.rows = (p.rows / 2) * 2;  // the bug: an odd last row is dropped
    // Rows are dense and row-major, so the first `pairs.rows` rows are a prefix.
    return HostTwin::forward(pairs, res, gate, index, y, out);
  }
};

}  // namespace

const gatecheck_plugin* skipped_row_plugin() { return MutantAbi<SkippedRow>::plugin(); }

}  // namespace gatecheck::mutants
