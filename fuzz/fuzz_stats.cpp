#include "fuzz_stats.h"

#include "op_target.h"

#include <nlohmann/json.hpp>

#include <vector>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace gatecheck::fuzz {
namespace {

// Plain arrays indexed like the decoder's choices: counting costs nothing and
// adds no string compares for trace-cmp to chase.
struct Stats {
  int64_t cases = 0;
  std::vector<int64_t> patterns = std::vector<int64_t>(all_index_patterns().size());
  std::vector<int64_t> dtypes = std::vector<int64_t>(3);
  // The target op's value classes: the decoder's `values` indexes them, the
  // op's own classes after the common list.
  std::vector<std::string> value_names = value_classes_of(fuzz_target_op());
  std::vector<int64_t> values = std::vector<int64_t>(value_names.size());
  std::vector<int64_t> plans = std::vector<int64_t>(size_t(plan_choices()));
  std::vector<int64_t> shapes = std::vector<int64_t>(size_t(kShapeClasses));
  std::chrono::steady_clock::time_point last_flush = std::chrono::steady_clock::now();
};
Stats& stats() {
  static Stats s;
  static const bool at_exit = std::atexit(flush_stats) == 0;  // libFuzzer ends with exit()
  (void)at_exit;
  return s;
}

template <class Name>
nlohmann::json named(const std::vector<int64_t>& counts, Name name) {
  nlohmann::json j = nlohmann::json::object();
  for (size_t i = 0; i < counts.size(); ++i)
    if (counts[i]) j[name(i)] = counts[i];
  return j;
}

}  // namespace

void flush_stats() {
  const char* path = std::getenv("GATECHECK_FUZZ_STATS");
  if (!path || !*path) return;
  const Stats& s = stats();
  nlohmann::json j = {
      {"cases", s.cases},
      {"patterns", named(s.patterns, [](size_t i) { return all_index_patterns()[i]; })},
      {"dtypes", named(s.dtypes, [](size_t i) { return dtype_name(DType(i)); })},
      {"values", named(s.values, [&s](size_t i) { return s.value_names[i]; })},
      {"plans", named(s.plans, [](size_t i) { return plan_choice_name(int(i)); })},
      {"shapes", named(s.shapes, [](size_t i) { return shape_class_name(int(i)); })}};
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
  ++s.patterns[size_t(info.pattern)];
  ++s.dtypes[size_t(c.dtype)];
  ++s.values[size_t(info.values)];
  ++s.plans[size_t(info.plan)];
  ++s.shapes[size_t(info.shape_class)];
  // A second apart at most, asked at every case: libFuzzer's Ctrl-C and SIGTERM end with _Exit,
  // past the exit handler, so a stopped worker's count is what it last wrote (once every 256
  // cases, a short campaign stopped early reported none).
  const auto now = std::chrono::steady_clock::now();
  if (now - s.last_flush > std::chrono::seconds(1)) {
    s.last_flush = now;
    flush_stats();
  }
}

}  // namespace gatecheck::fuzz
