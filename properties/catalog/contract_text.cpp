// Contract::parse: the text of a contract, as --claims and a Python
// implementation's gatecheck_claims give it, and as Contract::describe()
// writes it (contract.h has the grammar).
#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "../../case/case.h"
#include "contract.h"

namespace gatecheck {

namespace {

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t\n");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t\n") - a + 1);
}

// Splits on `sep` outside parentheses (a reason may hold any character but ')').
std::vector<std::string> split_outside_parens(const std::string& s, char sep) {
  std::vector<std::string> parts(1);
  int depth = 0;
  for (char ch : s) {
    if (ch == '(') ++depth;
    if (ch == ')' && depth > 0) --depth;
    if (ch == sep && depth == 0) parts.emplace_back();
    else parts.back() += ch;
  }
  return parts;
}

bool is_bound(const std::string& item) {
  return item.find(">=") != std::string::npos || item.find("<=") != std::string::npos;
}

// A claim ("p" or "p:o", o an output of op), checked; `in` is the text it
// came from, for messages.
std::string claim(const std::string& item, const std::string& in, const std::string& what, const OpSchema& op) {
  const auto colon = item.find(':');
  const std::string p = item.substr(0, colon);
  if (!is_property(p)) throw std::invalid_argument(what + ": " + unknown_property(p) + " in '" + in + "'");
  if (colon != std::string::npos && op.output_index(item.substr(colon + 1)) < 0)
    throw std::invalid_argument(what + ": unknown output '" + item.substr(colon + 1) + "' in '" + in + "' (" +
                                op.output_list() + ")");
  return item;
}

std::vector<DType> dtypes(const std::string& list, const std::string& in, const std::string& what) {
  std::vector<DType> v;
  std::stringstream ss(list);
  for (std::string raw; std::getline(ss, raw, ',');) {
    const std::string d = trim(raw);
    if (d == "bf16") v.push_back(DType::bf16);
    else if (d == "f16" || d == "fp16") v.push_back(DType::f16);
    else if (d == "f32" || d == "fp32") v.push_back(DType::f32);
    else throw std::invalid_argument(what + ": unknown dtype '" + d + "' in '" + in + "' (bf16, f16, f32)");
  }
  if (v.empty()) throw std::invalid_argument(what + ": 'for' names no dtype in '" + in + "'");
  return v;
}

// "not CLAIM [for DTYPES] [(REASON)]", without the leading "not".
Contract::Exception exception_part(const std::string& part, const std::string& what, const OpSchema& op) {
  std::string rest = trim(part.substr(3));
  Contract::Exception e;
  if (const auto open = rest.find('('); open != std::string::npos) {
    const auto close = rest.rfind(')');
    if (close == std::string::npos || close < open)
      throw std::invalid_argument(what + ": unclosed '(' in '" + part + "'");
    e.reason = trim(rest.substr(open + 1, close - open - 1));
    rest = trim(rest.substr(0, open));
  }
  const auto for_at = rest.find(" for ");
  e.claim = claim(trim(rest.substr(0, for_at)), part, what, op);
  if (for_at != std::string::npos) e.dtypes = dtypes(rest.substr(for_at + 5), part, what);
  return e;
}

}  // namespace

Contract Contract::parse(const std::string& text, const std::string& what, const OpSchema& op) {
  Contract c;
  c.op = &op;
  bool named_a_claim = false;
  for (const std::string& raw : split_outside_parens(text, ';')) {
    const std::string part = trim(raw);
    if (part.empty()) continue;
    if (part == "not" || part.rfind("not ", 0) == 0) {
      c.exceptions.push_back(exception_part(part, what, op));
      continue;
    }
    if (part.rfind("valid ", 0) == 0) {
      c.valid = c.valid.within(ValidInputs::parse(part.substr(6), what));
      continue;
    }
    std::string list = part;  // "default set + eager_exact": '+' joins like ','
    std::replace(list.begin(), list.end(), '+', ',');
    std::stringstream ss(list + ",");  // the extra comma lets getline see an empty last item
    for (std::string raw_item; std::getline(ss, raw_item, ',');) {
      const std::string item = trim(raw_item);
      if (item.empty())  // a claim lost to a stray comma would check less than the text says
        throw std::invalid_argument(what + ": an empty claim (two commas, or one at an end) in '" + part + "'");
      if (is_bound(item)) {
        c.valid = c.valid.within(ValidInputs::parse(item, what));
      } else if (item == "default" || item == "default set") {
        named_a_claim = true;
        for (const auto& p : default_properties())
          if (std::find(c.claims.begin(), c.claims.end(), p) == c.claims.end()) c.claims.push_back(p);
      } else {
        named_a_claim = true;
        if (std::find(c.claims.begin(), c.claims.end(), item) == c.claims.end())
          c.claims.push_back(claim(item, item, what, op));
      }
    }
  }
  if (!named_a_claim) c.claims = default_properties();
  return c;
}

}  // namespace gatecheck
