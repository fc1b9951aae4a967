// Bug class: an off-by-one at a tile's edge. The forward works in tiles of
// 4 rows, and the modulation of the last row of each tile reads table row
// index[r] + 1 (kept inside the table) instead of index[r]: the wrong shift
// and scale for one row in four.
// Caught by: accuracy (a batch of 4 rows or more whose 4th row's index is not
// the last table row, with table rows that differ); row_invariance too.
#include <algorithm>

#include "mutants.h"
#include "rms_twin.h"

namespace gatecheck::mutants {
namespace {

constexpr int64_t kTileRows = 4;

struct TileIndex : RmsHooks {
  static constexpr const char* kName = "mutant:rms-tile-index";
  static int64_t table_row(const int64_t* index, int64_t r, int64_t gates) {
    if (r % kTileRows == kTileRows - 1) return std::min(index[r] + 1, gates - 1);  // the bug
    return index[r];
  }
};

}  // namespace

const gatecheck_op_plugin* rms_tile_index_plugin() { return RmsMutantAbi<TileIndex>::plugin(); }

}  // namespace gatecheck::mutants
