// The rmsnorm_modulate twin with no hook changed: a correct implementation
// (fp32 sums in the plainest order), the false-alarm control that shows a mutant's
// failure is its planted bug and nothing else in rms_twin.h.
#include "mutants.h"
#include "rms_twin.h"

namespace gatecheck::mutants {
namespace {

struct Twin : RmsHooks {
  static constexpr const char* kName = "alt:rms-twin";
};

}  // namespace

const gatecheck_op_plugin* rms_twin_plugin() { return RmsMutantAbi<Twin>::plugin(); }

}  // namespace gatecheck::mutants
