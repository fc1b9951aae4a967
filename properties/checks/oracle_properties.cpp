// accuracy (every element within the float64 oracle's bound, special values
// by the defined semantics) and the opt-in eager_exact (bitwise equal to the
// eager rounding model).
#include <sstream>

#include "../../harness/run/stage_clock.h"
#include "../../oracles/op_oracles.h"
#include "property_impls.h"

namespace gatecheck::checks {

using namespace detail;

Verdict accuracy(const Implementation& impl, const Case& c, const PropertyOptions& o) {
  const RunResult result = run(impl, c, o);
  device_done(o);
  if (!result.status.ok()) return run_failed(c, impl.label(), result.status);
  StageTimer oracle(Stage::oracle);
  const Reference ref = oracle_reference(c);
  oracle.stop();
  const StageTimer compare(Stage::compare);
  Verdict v;
  std::ostringstream msg;
  msg.precision(9);  // enough digits that got and want differ on the page when their floats do
  for (size_t k = 0; k < c.op->outputs.size(); ++k) {
    const char* name = c.op->outputs[k].name;
    const Comparison cmp = compare_accuracy(name, result.outputs.tensors[k], ref.outputs[k]);
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
  device_done(o);
  if (!result.status.ok()) return run_failed(c, impl.label(), result.status);
  StageTimer oracle(Stage::oracle);
  const Outputs model = eager_model(c);
  oracle.stop();
  const StageTimer compare(Stage::compare);
  Verdict v;
  std::ostringstream msg;
  // The outputs the op's eager model pins bit for bit (oracles/op_oracles.h).
  for (const std::string& name : op_oracle(*c.op).eager_outputs) {
    const Comparison cmp = compare_bitwise(name, result.outputs[name], model[name], /*nan_any=*/true);
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

}  // namespace gatecheck::checks
