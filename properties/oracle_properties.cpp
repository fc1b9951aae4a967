// accuracy (every element within the float64 oracle's bound, special values
// by the defined semantics) and the opt-in eager_exact (bitwise equal to the
// eager rounding model).
#include <sstream>

#include "../harness/stage_clock.h"
#include "property_impls.h"

namespace gatecheck::detail {

Verdict accuracy(const Implementation& impl, const Case& c, const PropertyOptions& o) {
  const RunResult result = run(impl, c, o);
  if (!result.status.ok()) return run_failed("accuracy", c, impl.label(), result.status);
  StageTimer oracle(Stage::oracle);
  const Reference ref = oracle_reference(c);
  oracle.stop();
  const StageTimer compare(Stage::compare);
  Verdict v;
  v.property = "accuracy";
  std::ostringstream msg;
  msg.precision(9);  // enough digits that got and want differ on the page when their floats do
  for (const char* name : kOutputNames) {
    const Comparison cmp = compare_accuracy(name, output_by_name(result.outputs, name), ref.by_name(name));
    v.compared += cmp.checked;
    if (cmp.ok()) continue;
    add_failure(v, cmp);
    const Mismatch& m = cmp.first.front();
    msg << (msg.tellp() > 0 ? "; " : "") << name << ": " << cmp.failed << " of " << cmp.checked
        << " elements outside the oracle bound, first [" << m.row << ", " << m.col << "] got " << m.got
        << " want " << m.want << " bound " << m.bound << " (" << m.why << ")";
  }
  if (!v.passed) v.message = impl.label() + " on " + describe(c) + ": " + msg.str();
  return v;
}

Verdict eager_exact(const Implementation& impl, const Case& c, const PropertyOptions& o) {
  const RunResult result = run(impl, c, o);
  if (!result.status.ok()) return run_failed("eager_exact", c, impl.label(), result.status);
  StageTimer oracle(Stage::oracle);
  const Outputs model = eager_model(c);
  oracle.stop();
  const StageTimer compare(Stage::compare);
  Verdict v;
  v.property = "eager_exact";
  std::ostringstream msg;
  // grad_gate is not in the eager model's bitwise claim (see oracle.h).
  for (const char* name : {"out", "grad_res", "grad_y"}) {
    const Comparison cmp = compare_bitwise(name, output_by_name(result.outputs, name), output_by_name(model, name),
                                           /*nan_any=*/true);
    v.compared += cmp.checked;
    if (cmp.ok()) continue;
    add_failure(v, cmp);
    const Mismatch& m = cmp.first.front();
    msg << (msg.tellp() > 0 ? "; " : "") << name << ": " << cmp.failed << " of " << cmp.checked
        << " elements differ from the eager model, first [" << m.row << ", " << m.col << "] bits 0x" << std::hex
        << m.got_bits << " vs eager 0x" << m.want_bits << std::dec;
  }
  if (!v.passed) v.message = impl.label() + " on " + describe(c) + ": " + msg.str();
  return v;
}

}  // namespace gatecheck::detail
