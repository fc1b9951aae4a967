// Reading reports (ours, an earlier sweep's, the prior art's): a value at a
// path of keys, absent where any key is missing (a partial report, another
// tool's); an object's keys with the numbers (rows) in numeric order, as
// JSON objects keep theirs sorted as text.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gatecheck {

inline const nlohmann::json* json_at(const nlohmann::json& j, const std::vector<std::string>& path) {
  const nlohmann::json* p = &j;
  for (const auto& k : path) {
    if (!p->is_object() || !p->contains(k)) return nullptr;
    p = &p->at(k);
  }
  return p;
}

// The same, with null where it is absent. Callers keep what it returns by
// value, or use it at once: g++ 13's -Wdangling-reference flags a reference
// initialised from it, taking the braced path (a temporary) for what the
// returned reference might point into.
inline const nlohmann::json& value_at(const nlohmann::json& j, std::vector<std::string> path) {
  static const nlohmann::json none;
  const nlohmann::json* p = json_at(j, path);
  return p ? *p : none;
}

// The keys of the objects given (null ones skipped), each once.
inline std::vector<std::string> keys_in_order(std::initializer_list<const nlohmann::json*> objects) {
  std::vector<std::string> keys;
  for (const nlohmann::json* o : objects)
    if (o && o->is_object())
      for (const auto& [k, _] : o->items())
        if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  auto number = [](const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; };
  std::stable_sort(keys.begin(), keys.end(), [&](const std::string& a, const std::string& b) {
    return number(a) && number(b) ? std::stoll(a) < std::stoll(b) : number(a) && !number(b);
  });
  return keys;
}

}  // namespace gatecheck
