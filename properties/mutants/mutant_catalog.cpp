#include "mutants.h"

namespace gatecheck::mutants {

const std::vector<MutantInfo>& mutant_catalog() {
  static const std::vector<MutantInfo> c = {
      {"fused-large-batch", "row_invariance", fused_large_batch_plugin},
      {"absolute-row-tiles", "segment_invariance", absolute_row_tiles_plugin},
      {"shuffled-accumulation", "repeatable", shuffled_accumulation_plugin},
      {"tail-columns", "accuracy", tail_columns_plugin},
      {"bf16-accumulator", "accuracy", bf16_accumulator_plugin},
      {"last-gate-boundary", "accuracy", last_gate_boundary_plugin},
      {"skipped-row", "full_write", skipped_row_plugin},
      {"unwritten-unused-gate", "full_write", unwritten_unused_gate_plugin},
      {"zero-y-shortcut", "accuracy", zero_y_shortcut_plugin},
      {"subnormal-flush", "accuracy", subnormal_flush_plugin},
  };
  return c;
}

const std::vector<MutantInfo>& alternative_catalog() {
  static const std::vector<MutantInfo> c = {
      {"fused-forward", "", fused_forward_plugin},
      {"pairwise-grad-gate", "", pairwise_grad_gate_plugin},
  };
  return c;
}

const gatecheck_plugin* find_mutant_plugin(const std::string& name) {
  for (const auto* list : {&mutant_catalog(), &alternative_catalog()})
    for (const auto& m : *list) {
      const gatecheck_plugin* p = m.plugin();
      if (name == m.bug_class || name == p->name) return p;
    }
  return nullptr;
}

const std::vector<OpMutantInfo>& rmsnorm_modulate_mutant_catalog() {
  static const std::vector<OpMutantInfo> c = {
      {"rms-batch-split", "row_invariance", rms_batch_split_plugin},
      {"rms-atomic-dweight", "repeatable", rms_atomic_dweight_plugin},
      {"rms-tile-index", "accuracy", rms_tile_index_plugin},
      {"rms-no-eps", "accuracy", rms_no_eps_plugin},
      {"rms-tail-columns", "accuracy", rms_tail_columns_plugin},
      {"rms-dtype-statistics", "accuracy", rms_dtype_statistics_plugin},
  };
  return c;
}

const std::vector<OpMutantInfo>& rmsnorm_modulate_alternative_catalog() {
  static const std::vector<OpMutantInfo> c = {{"rms-twin", "", rms_twin_plugin}};
  return c;
}

const gatecheck_op_plugin* find_op_mutant_plugin(const std::string& name) {
  for (const auto* list : {&rmsnorm_modulate_mutant_catalog(), &rmsnorm_modulate_alternative_catalog()})
    for (const auto& m : *list) {
      const gatecheck_op_plugin* p = m.plugin();
      if (name == m.bug_class || name == p->name) return p;
    }
  return nullptr;
}

}  // namespace gatecheck::mutants
