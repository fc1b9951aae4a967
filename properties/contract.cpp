#include "contract.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "../case/case.h"

namespace gatecheck {

const std::vector<std::string>& default_properties() {
  static const std::vector<std::string> p = {
      "accuracy",         "row_invariance", "segment_invariance", "repeatable",
      "inputs_untouched", "full_write",     "no_oob_write",       "error_inputs"};
  return p;
}
const std::vector<std::string>& all_properties() {
  static const std::vector<std::string> p = [] {
    auto v = default_properties();
    v.push_back("eager_exact");  // opt-in
    return v;
  }();
  return p;
}
bool is_property(const std::string& p) {
  const auto& all = all_properties();
  return std::find(all.begin(), all.end(), p) != all.end();
}
std::string unknown_property(const std::string& p) {
  std::string known;
  for (const auto& k : all_properties()) known += (known.empty() ? "" : ", ") + k;
  return "unknown property '" + p + "' (" + known + ")";
}

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

Contract Contract::everything() {
  Contract c;
  c.claims = default_properties();
  return c;
}

Contract known_contract(const Implementation& impl) {
  if (!impl.declared_claims.empty()) return Contract::parse(impl.declared_claims, impl.label() + "'s gatecheck_claims");
  Contract c = Contract::everything();
  if (impl.name != "torch-eager") return c;
  const Device device = impl.device;
  c.exceptions.push_back(
      {"accuracy:grad_gate", {DType::bf16, DType::f16}, "index_add accumulates in the dtype"});
  if (device == Device::cpu) {
    // Found by gatecheck (tests/properties/torch_finding_test.cpp): a bf16
    // NaN result's bits depend on whether the row fell in the vectorised
    // body or the scalar tail of LibTorch's CPU loop, i.e. on its place in
    // the batch (0xffff vs 0x7fc0). f16 and f32 held over 300 NaN cases each.
    for (const char* out : {"row_invariance:out", "row_invariance:grad_y"})
      c.exceptions.push_back({out, {DType::bf16}, "NaN bits depend on the row's place in the batch"});
  }
  if (device == Device::cuda) {
    c.exceptions.push_back({"repeatable", {}, "index_add uses atomics"});
    c.exceptions.push_back(
        {"segment_invariance", {}, "atomics order a gate's rows by timing"});
  }
  return c;
}

Contract override_contract(const Contract& known, const std::string& claims, const std::string& valid) {
  Contract c = claims.empty() ? known : Contract::parse(claims, "--claims");
  if (!valid.empty()) c.valid = c.valid.within(ValidInputs::parse(valid, "--valid"));
  return c;
}

Subject subject_of(Implementation impl) {
  Subject s;
  static_cast<Implementation&>(s) = std::move(impl);
  s.contract = known_contract(s);
  return s;
}

Subject make_subject(const std::string& spec, Device device) {
  return subject_of(make_implementation(spec, device));
}

std::vector<Subject> available_subjects(const std::string& device_filter) {
  std::vector<Subject> v;
  for (auto& i : available_implementations(device_filter)) v.push_back(subject_of(std::move(i)));
  return v;
}

}  // namespace gatecheck
