#include "valid_inputs.h"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <stdexcept>

namespace gatecheck {

namespace {

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

// One extent's bounds, and how each is spelled.
struct Bounds {
  const char* name;
  int64_t ValidInputs::*min;
  int64_t ValidInputs::*max;
};
constexpr Bounds kBounds[] = {{"rows", &ValidInputs::min_rows, &ValidInputs::max_rows},
                              {"dim", &ValidInputs::min_dim, &ValidInputs::max_dim},
                              {"gates", &ValidInputs::min_gates, &ValidInputs::max_gates}};

int64_t extent(const Case& c, const std::string& name) {
  return name == "rows" ? c.rows : name == "dim" ? c.dim : c.gates;
}

}  // namespace

bool ValidInputs::narrowed() const {
  const ValidInputs all;
  for (const auto& b : kBounds)
    if (this->*b.min != all.*b.min || this->*b.max != all.*b.max) return true;
  return false;
}

std::string ValidInputs::why_not(const Case& c) const {
  for (const auto& b : kBounds) {
    const int64_t n = extent(c, b.name);
    if (n < this->*b.min || n > this->*b.max)
      return std::string(b.name) + " = " + std::to_string(n) + " is outside the contract's valid inputs (" +
             describe() + ")";
  }
  return "";
}

std::string ValidInputs::describe() const {
  const ValidInputs all;
  std::ostringstream s;
  const char* sep = "";
  for (const auto& b : kBounds) {
    if (this->*b.min != all.*b.min) s << sep << b.name << ">=" << this->*b.min, sep = ",";
    if (this->*b.max != all.*b.max) s << sep << b.name << "<=" << this->*b.max, sep = ",";
  }
  return s.str();
}

ValidInputs ValidInputs::within(const ValidInputs& o) const {
  ValidInputs v = *this;
  for (const auto& b : kBounds) {
    v.*b.min = std::max(this->*b.min, o.*b.min);
    v.*b.max = std::min(this->*b.max, o.*b.max);
  }
  return v;
}

ValidInputs ValidInputs::parse(const std::string& list, const std::string& what) {
  ValidInputs v;
  std::stringstream ss(list);
  for (std::string raw; std::getline(ss, raw, ',');) {
    const std::string item = trim(raw);
    if (item.empty()) continue;
    auto bad = [&](const std::string& why) {
      return std::invalid_argument(what + ": '" + item + "' " + why);
    };
    size_t op = item.find(">=");
    const bool at_least = op != std::string::npos;
    if (!at_least) op = item.find("<=");
    if (op == std::string::npos) throw bad("is not a bound such as rows>=1 (rows, dim or gates, then >= or <=, then a number)");
    const std::string name = trim(item.substr(0, op)), number = trim(item.substr(op + 2));
    const Bounds* b = nullptr;
    for (const auto& k : kBounds)
      if (name == k.name) b = &k;
    if (!b) throw bad("bounds '" + name + "', which is not rows, dim or gates");
    if (number.empty() || number.size() > 18 ||
        !std::all_of(number.begin(), number.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); }))
      throw bad("needs a whole number after " + std::string(at_least ? ">=" : "<="));
    const int64_t n = std::stoll(number);
    if (at_least && name == "rows" && n > 1)
      throw bad("is not allowed: at most rows>=1 (row_invariance and segment_invariance run single rows, so every "
                "contract must accept one row)");
    if (!at_least && n < 1) throw bad("would exclude every non-empty problem");
    if (at_least) v.*b->min = std::max(v.*b->min, n);
    else v.*b->max = std::min(v.*b->max, n);
  }
  for (const auto& b : kBounds)
    if (v.*b.min > v.*b.max)
      throw std::invalid_argument(what + ": " + b.name + ">=" + std::to_string(v.*b.min) + " and " + b.name +
                                  "<=" + std::to_string(v.*b.max) + " leave no valid " + b.name);
  return v;
}

}  // namespace gatecheck
