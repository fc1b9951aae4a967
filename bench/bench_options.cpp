#include "bench_options.h"

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

std::string tuning_item(const std::string& t) {
  static const std::pair<const char*, const char*> kShort[] = {
      {"cub", "plan=1"},     {"count", "plan=2"},  {"fused", "plan=3"},      {"thread", "tile=1"},
      {"staged", "tile=2"},  {"piped", "tile=3"},  {"seg256", "seg=256"},    {"t512", "threads=512"},
      {"c1", "cols=1"}};
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
                 "cols=, cluster=) or a short name: cub, count, fused, thread, staged, piped, seg256, t512, c1, kxN, vN; "
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
