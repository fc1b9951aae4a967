#include "contract.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "../../case/case.h"

namespace gatecheck {

namespace {
// Does claim c ("p" or "p:o") cover (property, output)?
bool covers(const std::string& c, const std::string& property, const std::string& output) {
  const auto colon = c.find(':');
  if (colon == std::string::npos) return c == property;
  return c.compare(0, colon, property) == 0 && colon == property.size() &&
         (output.empty() || c.compare(colon + 1, std::string::npos, output) == 0);
}
}  // namespace

bool Contract::claims_for(const std::string& property, const std::string& output, DType t) const {
  bool claimed = false;
  for (const auto& c : claims) claimed = claimed || covers(c, property, output);
  if (!claimed) return false;
  for (const auto& e : exceptions) {
    const bool dtype_hit = e.dtypes.empty() || std::find(e.dtypes.begin(), e.dtypes.end(), t) != e.dtypes.end();
    // An exception on "p:o" withdraws that output, and with output "" the
    // property as a whole is no longer fully claimed either.
    if (dtype_hit && (covers(e.claim, property, output) || (output.empty() && e.claim.rfind(property + ":", 0) == 0)))
      return false;
  }
  return true;
}

bool Contract::claims_any_part(const std::string& property, DType t) const {
  if (claims_for(property, "", t)) return true;
  for (const auto& o : op->outputs)
    if (claims_for(property, o.name, t)) return true;
  return false;
}

std::string Contract::describe() const {
  std::ostringstream s;
  const auto& def = default_properties();
  const bool all_default = std::all_of(def.begin(), def.end(), [&](const std::string& p) {
    return std::find(claims.begin(), claims.end(), p) != claims.end();
  });
  if (all_default) {
    s << "default set";
    for (const auto& c : claims)
      if (std::find(def.begin(), def.end(), c) == def.end()) s << " + " << c;
  } else {
    for (size_t i = 0; i < claims.size(); ++i) s << (i ? "," : "") << claims[i];
  }
  for (const auto& e : exceptions) {
    s << "; not " << e.claim;
    if (!e.dtypes.empty()) {
      s << " for ";
      for (size_t i = 0; i < e.dtypes.size(); ++i) s << (i ? "," : "") << dtype_name(e.dtypes[i]);
    }
    if (!e.reason.empty()) s << " (" << e.reason << ")";
  }
  if (valid.narrowed()) s << "; valid " << valid.describe();
  return s.str();
}

Contract Contract::everything(const OpSchema& op) {
  Contract c;
  c.op = &op;
  c.claims = default_properties();
  return c;
}

Contract known_contract(const Implementation& impl) {
  if (!impl.declared_claims.empty())
    return Contract::parse(impl.declared_claims, impl.label() + "'s gatecheck_claims", *impl.op);
  return Contract::everything(*impl.op);
}

Contract override_contract(const Contract& known, const std::string& claims, const std::string& valid,
                           const OpSchema& op) {
  Contract c = claims.empty() ? known : Contract::parse(claims, "--claims", op);
  if (!valid.empty()) c.valid = c.valid.within(ValidInputs::parse(valid, "--valid"));
  return c;
}

Subject subject_of(Implementation impl) {
  Subject s;
  static_cast<Implementation&>(s) = std::move(impl);
  s.contract = known_contract(s);
  return s;
}

Subject make_subject(const std::string& spec, Device device, const OpSchema& op) {
  return subject_of(make_implementation(spec, device, op));
}

std::vector<Subject> available_subjects(const std::string& device_filter, const OpSchema& op) {
  std::vector<Subject> v;
  for (auto& i : available_implementations(device_filter, op)) v.push_back(subject_of(std::move(i)));
  return v;
}

}  // namespace gatecheck
