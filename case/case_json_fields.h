// Typed, range-checked reads of corpus-file JSON fields, shared by the case
// and scale-case readers. Every problem throws CaseFileError naming the origin
// and the field.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "case_json.h"

namespace gatecheck::json_fields {

using nlohmann::json;

[[noreturn]] inline void fail(const std::string& origin, const std::string& what) {
  throw CaseFileError(origin + ": " + what);
}

// The integer type a field holds (itself, or its arrays' elements), or void.
template <class T, class = void>
struct IntegerOf {
  using type = void;
};
template <class T>
struct IntegerOf<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
  using type = T;
};
template <class T>
struct IntegerOf<std::vector<T>> : IntegerOf<T> {};

// Every number in v is a JSON integer within I's range. nlohmann's get<I>
// casts a float or an out-of-range integer (undefined for 5.5e107, which the
// corpus-file fuzzer found; a silent wrap for 2^64 - 1 or 2^32 + 1).
template <class I>
void require_integers(const json& v, const char* name, const std::string& origin) {
  if (v.is_array()) {
    for (const json& e : v) require_integers<I>(e, name, origin);
    return;
  }
  if (!v.is_number()) return;  // a wrong type is reported by get<> itself
  using L = std::numeric_limits<I>;
  bool ok = false;
  if (v.is_number_unsigned()) ok = v.get<uint64_t>() <= uint64_t(L::max());
  else if (v.is_number_integer()) {
    const int64_t x = v.get<int64_t>();
    ok = x >= 0 ? uint64_t(x) <= uint64_t(L::max()) : std::is_signed_v<I> && x >= int64_t(L::min());
  }
  if (!ok)
    fail(origin, std::string("'") + name + "' holds " + v.dump() + ", not an integer in [" +
                     std::to_string(L::min()) + ", " + std::to_string(L::max()) + "]");
}

template <class T>
T field(const json& j, const char* name, const std::string& origin) {
  if (!j.contains(name)) fail(origin, std::string("missing field '") + name + "'");
  if constexpr (!std::is_void_v<typename IntegerOf<T>::type>)
    require_integers<typename IntegerOf<T>::type>(j.at(name), name, origin);
  try {
    return j.at(name).get<T>();
  } catch (const json::exception&) {
    fail(origin, std::string("field '") + name + "' has the wrong type");
  }
}

inline int64_t shape_field(const json& j, const char* name, const std::string& origin) {
  const int64_t v = field<int64_t>(j, name, origin);
  if (v < 0) fail(origin, std::string("'") + name + "' = " + std::to_string(v) + " is negative");
  return v;
}


}  // namespace gatecheck::json_fields
