// The planted mutants (positive controls: each has one deliberate bug that the
// default property set must catch) and the correct alternatives (false-alarm
// controls: valid implementations that must never be flagged). Each is a
// plugin-ABI implementation built from the host twin with one piece changed;
// the bug class is described at the top of its source file.
#pragma once

#include <string>
#include <vector>

#include "../../kernels/gatecheck_plugin.h"

namespace gatecheck::mutants {

struct MutantInfo {
  std::string bug_class;            // "tail-columns"; the plugin's name is "mutant:" + bug_class
  std::string caught_by;            // the property expected to catch it ("" for alternatives)
  const gatecheck_plugin* (*plugin)();
};

// At least 8 distinct bug classes.
const std::vector<MutantInfo>& mutant_catalog();
// Correct implementations with a different valid order / rounding.
const std::vector<MutantInfo>& alternative_catalog();

// A mutant or alternative by bug class or plugin name; nullptr if unknown.
const gatecheck_plugin* find_mutant_plugin(const std::string& name);

const gatecheck_plugin* fused_large_batch_plugin();
const gatecheck_plugin* absolute_row_tiles_plugin();
const gatecheck_plugin* shuffled_accumulation_plugin();
const gatecheck_plugin* tail_columns_plugin();
const gatecheck_plugin* bf16_accumulator_plugin();
const gatecheck_plugin* last_gate_boundary_plugin();
const gatecheck_plugin* skipped_row_plugin();
const gatecheck_plugin* unwritten_unused_gate_plugin();
const gatecheck_plugin* zero_y_shortcut_plugin();
const gatecheck_plugin* subnormal_flush_plugin();
const gatecheck_plugin* fused_forward_plugin();
const gatecheck_plugin* pairwise_grad_gate_plugin();

}  // namespace gatecheck::mutants
