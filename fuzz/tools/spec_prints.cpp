#include "spec_prints.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../case/case_spec.h"
#include "../../kernels/op_schema.h"
#include "../case_decoder.h"

namespace gatecheck::fuzz {

namespace {

struct Fnv {
  uint64_t h = 1469598103934665603ull;
  void add(uint64_t v) {
    h ^= v;
    h *= 1099511628211ull;
  }
};

void add_case(const Case& c, Fnv& f) {
  for (int64_t i : c.index) f.add(uint64_t(i));
  for (const HostTensor& t : c.inputs)
    for (int64_t i = 0; i < t.numel(); ++i) f.add(t.bits(i));
  for (double s : c.scalars) {
    uint64_t b;
    std::memcpy(&b, &s, sizeof b);
    f.add(b);
  }
  if (!c.plan) return;
  f.add(c.plan->batches.size());
  for (const auto& b : c.plan->batches) {
    f.add(b.size() + 0x100);  // (a batch's length apart from its rows)
    for (int64_t r : b) f.add(uint64_t(r));
  }
}

}  // namespace

int write_spec_prints(std::ostream& out, const std::vector<std::string>& input_dirs) {
  std::vector<std::vector<std::filesystem::path>> inputs;  // (read first: a bad folder prints nothing)
  for (const std::string& dir : input_dirs) {
    auto& files = inputs.emplace_back();
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
      if (e.is_regular_file()) files.push_back(e.path());
    if (files.empty()) throw std::invalid_argument(dir + ": no decoder inputs");
    std::sort(files.begin(), files.end());
  }
  std::vector<std::string> kinds = all_plan_kinds();
  for (const auto& k : split_plan_kinds()) kinds.push_back(k);
  struct Shape {
    int64_t rows, dim, gates;
  };
  const Shape shapes[] = {{9, 17, 3}, {130, 40, 9}};
  std::map<std::string, Fnv> families;
  for (const OpSchema* op : op_schemas())
    for (const auto& pattern : all_index_patterns())
      for (const auto& cls : value_classes_of(*op))
        for (const auto& kind : kinds) {
          Fnv& f = families[std::string(op->name) + " " + pattern + " " + kind + " " + cls];
          for (DType t : {DType::f32, DType::f16, DType::bf16})
            for (const Shape& sh : shapes) {
              CaseSpec s;
              s.op = op;
              s.dtype = t;
              s.rows = sh.rows;
              s.dim = sh.dim;
              s.gates = sh.gates;
              s.index_pattern = pattern;
              s.value_class = cls;
              s.plan_kind = kind;
              s.index_seed = 11 + uint64_t(sh.rows);
              s.value_seed = 13 + uint64_t(sh.dim);
              s.plan_seed = 17 + uint64_t(sh.gates);
              try {
                add_case(make_case_from_spec(s), f);
              } catch (const std::invalid_argument&) {  // a spec the kind refuses: the same in every build
                f.add(0xbad);
              }
            }
        }
  auto print = [&](const std::string& what, const Fnv& f) {
    char hex[20];
    std::snprintf(hex, sizeof hex, "%016llx", (unsigned long long)f.h);
    out << what << " " << hex << "\n";
  };
  for (const auto& [family, f] : families) print(family, f);
  int n = int(families.size());
  for (const auto& files : inputs) {
    for (const auto& path : files) {
      std::ifstream in(path, std::ios::binary);
      const std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
      for (const OpSchema* op : op_schemas()) {
        Fnv f;
        add_case(decode_case(*op, bytes.data(), bytes.size()), f);
        print("decode " + std::string(op->name) + " " + path.string(), f);
        ++n;
      }
    }
  }
  return n;
}

}  // namespace gatecheck::fuzz
