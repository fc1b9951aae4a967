#include "bench_options.h"

#include <initializer_list>
#include <sstream>
#include <utility>

namespace gatecheck {
namespace bench {

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

namespace {

bool positive_number(const std::string& s) {
  if (s.empty() || s.size() > 12 || s.find_first_not_of("0123456789") != std::string::npos) return false;
  return std::stoll(s) > 0;
}

// Every item of `list` passes `ok`, and there is one at least.
template <class Ok>
bool each(const char* option, const std::string& list, const char* expected, Ok ok, std::string* err) {
  const std::vector<std::string> items = split_commas(list);
  if (items.empty()) {
    *err = std::string(option) + " '" + list + "': no item (expected " + expected + ")";
    return false;
  }
  for (const auto& item : items)
    if (!ok(item)) {
      *err = std::string(option) + ": '" + item + "' is not " + expected;
      return false;
    }
  return true;
}

}  // namespace

int dtype_of(const std::string& name) {
  if (name == "bf16") return GATECHECK_BF16;
  if (name == "fp16" || name == "f16") return GATECHECK_F16;
  if (name == "fp32" || name == "f32") return GATECHECK_F32;
  return -1;
}

bool check_shape_lists(const std::string& dtypes, const std::string& dims, const std::string& rows,
                       const std::string& gates, const std::string& patterns, std::string* err) {
  auto one_of = [](std::initializer_list<const char*> names) {
    return [names](const std::string& s) {
      for (const char* n : names)
        if (s == n) return true;
      return false;
    };
  };
  auto gate_rule = [](const std::string& s) {
    return positive_number(s) || (s.rfind("rows/", 0) == 0 && positive_number(s.substr(5)));
  };
  auto known_dtype = [](const std::string& s) { return dtype_of(s) >= 0; };
  return each("--dtypes", dtypes, "bf16, fp16 or fp32", known_dtype, err) &&
         each("--dims", dims, "a positive number", positive_number, err) &&
         each("--rows", rows, "a positive number", positive_number, err) &&
         each("--gates", gates, "a positive number or rows/K", gate_rule, err) &&
         each("--patterns", patterns, "sorted, random or shuffled", one_of({"sorted", "random", "shuffled"}), err);
}

std::string tuning_item(const std::string& t) {
  static const std::pair<const char*, const char*> kShort[] = {
      {"cub", "plan=1"},    {"count", "plan=2"}, {"fused", "plan=3"}, {"thread", "tile=1"},
      {"staged", "tile=2"}, {"piped", "tile=3"}, {"short", "tile=4"}, {"seg256", "seg=256"},
      {"t512", "threads=512"}, {"c1", "cols=1"}, {"w8", "plan_warps=8"}};
  for (const auto& [name, item] : kShort)
    if (t == name) return item;
  if (t.size() > 2 && t.rfind("kx", 0) == 0) return "cluster=" + t.substr(2);
  if (t.size() > 1 && t[0] == 'v' && t[1] >= '0' && t[1] <= '9') return "vec=" + t.substr(1);
  return t;
}

bool parse_variants(const std::string& specs, const std::string& vecs, std::vector<Variant>* out, std::string* err) {
  std::vector<std::string> list;
  if (specs.empty()) {
    for (const auto& v : split_commas(vecs)) list.push_back(v == "0" ? "auto" : "v" + v);
  } else {
    list = split_commas(specs);
  }
  for (const auto& spec : list) {
    std::string items;
    size_t at = 0;
    while (true) {
      const size_t plus = spec.find('+', at);
      const std::string t = spec.substr(at, plus == std::string::npos ? std::string::npos : plus - at);
      if (t != "auto") {
        const std::string item = tuning_item(t);
        std::string warning;
        parse_cuda_tuning(item.c_str(), &warning);
        if (t.empty() || item == "no_pdl" || item.rfind("fwd_", 0) == 0 || !warning.empty()) {
          *err = "--bwd-variants: setting '" + t + "' in '" + spec + "' is not a backward setting" +
                 (warning.empty() ? std::string() : " (" + warning + ")") +
                 "; settings: auto, a GATECHECK_CUDA_TUNING item of the backward (plan=, tile=, vec=, seg=, threads=, "
                 "cols=, cluster=, plan_warps=) or a short name: cub, count, fused, thread, staged, piped, short, seg256, t512, c1, "
                 "w8, kxN, vN; "
                 "joined by '+'";
          return false;
        }
        items += (items.empty() ? "" : ",") + item;
      }
      if (plus == std::string::npos) break;
      at = plus + 1;
    }
    out->push_back(Variant{spec, parse_cuda_tuning(items.c_str(), nullptr)});
  }
  return true;
}

}  // namespace bench
}  // namespace gatecheck
