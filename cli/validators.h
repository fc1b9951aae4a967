// Command-line number checks with messages that say what is wrong: CLI11's
// own range checks let NaN through, wrap negative seeds and clamp huge
// counts, and word their errors with a 300-digit bound.
#pragma once

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

namespace gatecheck {

// A finite number of seconds, >= 0 (> 0 where zero makes no sense).
inline CLI::Validator finite_seconds(bool positive = false) {
  return CLI::Validator(
      [positive](std::string& v) -> std::string {
        char* end = nullptr;
        const double d = std::strtod(v.c_str(), &end);
        if (v.empty() || *end != '\0') return "'" + v + "' is not a number of seconds";
        if (!std::isfinite(d) || d < 0 || (positive && d == 0))
          return "'" + v + "' must be a finite number of seconds " + (positive ? "> 0" : ">= 0");
        return "";
      },
      "SECONDS");
}

// A finite fraction in [0, 1] (a share of a budget).
inline CLI::Validator fraction(const std::string& what) {
  return CLI::Validator(
      [what](std::string& v) -> std::string {
        char* end = nullptr;
        const double d = std::strtod(v.c_str(), &end);
        if (v.empty() || *end != '\0') return "'" + v + "' is not a number (" + what + ", from 0 to 1)";
        if (!std::isfinite(d) || d < 0 || d > 1) return "'" + v + "' is outside [0, 1] (" + what + ")";
        return "";
      },
      "SHARE");
}

// A whole number in [min, max], written in decimal digits only.
inline CLI::Validator whole_number(unsigned long long min, unsigned long long max, const std::string& what) {
  return CLI::Validator(
      [min, max, what](std::string& v) -> std::string {
        if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos)
          return "'" + v + "' is not a whole number >= " + std::to_string(min) + " (" + what + ")";
        errno = 0;
        const unsigned long long n = std::strtoull(v.c_str(), nullptr, 10);
        if (errno == ERANGE || n > max) return "'" + v + "' is too large (" + what + ", at most " + std::to_string(max) + ")";
        if (n < min) return "'" + v + "' is too small (" + what + ", at least " + std::to_string(min) + ")";
        return "";
      },
      "N");
}
// A comma-separated list of names: an empty list or an empty item is refused, since it is how
// an unset shell variable or a stray comma looks ("--properties $P", "a,,b"), and a list that
// silently lost a name would check less than asked.
inline CLI::Validator name_list(const std::string& what) {
  return CLI::Validator(
      [what](std::string& v) -> std::string {
        if (v.find_first_not_of(" ,") == std::string::npos) return "'" + v + "' names no " + what;
        size_t start = 0;
        for (;;) {
          const size_t comma = v.find(',', start);
          const std::string item = v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
          if (item.find_first_not_of(' ') == std::string::npos)
            return "'" + v + "' has an empty item (a " + what + " name between commas)";
          if (comma == std::string::npos) return "";
          start = comma + 1;
        }
      },
      "LIST");
}

// A whole number in [0, max].
inline CLI::Validator whole_number(unsigned long long max, const std::string& what) { return whole_number(0, max, what); }

}  // namespace gatecheck
