// The planted mutants (positive controls: each has one deliberate bug that the
// default property set must catch) and the correct alternatives (false-alarm
// controls: valid implementations that must never be flagged). Each is a
// plugin-ABI implementation built from the host twin with one piece changed;
// the bug class is described at the top of its source file.
#pragma once

#include <string>
#include <vector>

#include "../../kernels/gatecheck_plugin.h"
#include "../../kernels/gatecheck_plugin_v2.h"

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

// rmsnorm_modulate's planted mutants (rms_twin.h with one hook changed) and
// its correct control, behind the plugin ABI v2.
struct OpMutantInfo {
  std::string bug_class;  // "rms-tail-columns"; the plugin's name is "mutant:" + bug_class
  std::string caught_by;  // the property aimed at it ("" for the alternative)
  const gatecheck_op_plugin* (*plugin)();
};
const std::vector<OpMutantInfo>& rmsnorm_modulate_mutant_catalog();
const std::vector<OpMutantInfo>& rmsnorm_modulate_alternative_catalog();
// By bug class or plugin name; nullptr if unknown.
const gatecheck_op_plugin* find_op_mutant_plugin(const std::string& name);

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
const gatecheck_op_plugin* rms_batch_split_plugin();
const gatecheck_op_plugin* rms_atomic_dweight_plugin();
const gatecheck_op_plugin* rms_tile_index_plugin();
const gatecheck_op_plugin* rms_no_eps_plugin();
const gatecheck_op_plugin* rms_tail_columns_plugin();
const gatecheck_op_plugin* rms_dtype_statistics_plugin();
const gatecheck_op_plugin* rms_twin_plugin();

}  // namespace gatecheck::mutants
