// The plugin entry point of one mutant, built into its own shared library
// (gatecheck_mutant_<class>.so) with GATECHECK_MUTANT set to its bug class,
// so `gatecheck check --impl plugin:PATH` can be pointed at a planted bug.
#include "mutants.h"

#ifndef GATECHECK_MUTANT
#error "build with -DGATECHECK_MUTANT=\"<bug class>\""
#endif

extern "C" __attribute__((visibility("default"))) const gatecheck_plugin* gatecheck_plugin_v1(void) {
  return gatecheck::mutants::find_mutant_plugin(GATECHECK_MUTANT);
}
