// The plugin entry point of one of rmsnorm_modulate's mutants, built into its
// own shared library (gatecheck_mutant_rms_<class>.so) with GATECHECK_MUTANT
// set to its bug class, for `gatecheck check --op rmsnorm_modulate --impl
// plugin:PATH`.
#include <cstring>

#include "mutants.h"

#ifndef GATECHECK_MUTANT
#error "build with -DGATECHECK_MUTANT=\"<bug class>\""
#endif

extern "C" __attribute__((visibility("default"))) const gatecheck_op_plugin* gatecheck_plugin_v2(const char* op) {
  const gatecheck_op_plugin* p = gatecheck::mutants::find_op_mutant_plugin(GATECHECK_MUTANT);
  return p && op && std::strcmp(op, p->op) == 0 ? p : nullptr;
}
