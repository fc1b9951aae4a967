// The oracle's entry points for any op: each op's reference and eager model
// come from its entry in the oracle catalog (op_oracles.h).
#include <stdexcept>

#include "op_oracles.h"

namespace gatecheck {

const char* kind_name(Expected::Kind k) {
  switch (k) {
    case Expected::finite: return "finite";
    case Expected::nan: return "NaN";
    case Expected::pos_inf: return "+Inf";
    case Expected::neg_inf: return "-Inf";
    case Expected::finite_or_inf: return "finite or Inf";
    case Expected::finite_or_overflow: return "finite, Inf or NaN (fp32 overflow)";
    case Expected::inf_or_nan: return "the Inf of the value's sign, or NaN (an fp32 rounding overflowed to the opposite Inf)";
  }
  return "?";
}

Reference Reference::shaped(const Case& c) {
  Reference r;
  r.op = c.op;
  for (const auto& o : c.op->outputs)
    r.outputs.emplace_back(size_t(role_rows(o.role, c.rows, c.gates) * role_cols(o.role, c.dim)));
  return r;
}

const std::vector<Expected>& Reference::operator[](std::string_view output) const {
  const int k = op->output_index(output);
  if (k < 0)
    throw std::invalid_argument(std::string(op->name) + " has no output '" + std::string(output) + "' (" +
                                op->output_list() + ")");
  return outputs[size_t(k)];
}

std::vector<Expected>& Reference::operator[](std::string_view output) {
  return const_cast<std::vector<Expected>&>(static_cast<const Reference&>(*this)[output]);
}

Reference oracle_reference(const Case& c) {
  require_valid_case("oracle_reference", c);
  return op_oracle(*c.op).reference(c);
}

Outputs eager_model(const Case& c) {
  require_valid_case("eager_model", c);
  const OpOracle& o = op_oracle(*c.op);
  if (!o.eager_model) throw std::invalid_argument(std::string("eager_model: ") + c.op->name + " has no eager model");
  return o.eager_model(c);
}

}  // namespace gatecheck
