#include "fuzz_stats.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

namespace gatecheck::fuzz {
namespace {

struct Stats {
  int64_t cases = 0;
  std::map<std::string, int64_t> patterns, dtypes, values, plans, shapes;
  std::chrono::steady_clock::time_point last_flush = std::chrono::steady_clock::now();
};
Stats& stats() {
  static Stats s;
  return s;
}

}  // namespace

void flush_stats() {
  const char* path = std::getenv("GATECHECK_FUZZ_STATS");
  if (!path || !*path) return;
  const Stats& s = stats();
  nlohmann::json j = {{"cases", s.cases},   {"patterns", s.patterns}, {"dtypes", s.dtypes},
                      {"values", s.values}, {"plans", s.plans},       {"shapes", s.shapes}};
  const std::string tmp = std::string(path) + ".tmp";
  {
    std::ofstream f(tmp);
    f << j.dump(1) << "\n";
  }
  std::rename(tmp.c_str(), path);  // readers never see half a file
}

void count_case(const Case& c, const DecodeInfo& info) {
  Stats& s = stats();
  ++s.cases;
  ++s.patterns[index_pattern_name(info.pattern)];
  ++s.dtypes[dtype_name(c.dtype)];
  ++s.values[value_class_name(info.values)];
  ++s.plans[plan_kind_name(info.plan)];
  ++s.shapes["rows" + std::to_string(info.shape_class / 5) + "_dim" + std::to_string(info.shape_class % 5)];
  if ((s.cases & 255) == 0) {
    const auto now = std::chrono::steady_clock::now();
    if (now - s.last_flush > std::chrono::seconds(2)) {
      s.last_flush = now;
      flush_stats();
    }
  }
}

}  // namespace gatecheck::fuzz
