#include "spec_prints.h"

#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../case/case_spec.h"
#include "../../kernels/op_schema.h"

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

int write_spec_prints(std::ostream& out) {
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
  for (const auto& [family, f] : families) {
    char hex[20];
    std::snprintf(hex, sizeof hex, "%016llx", (unsigned long long)f.h);
    out << family << " " << hex << "\n";
  }
  return int(families.size());
}

}  // namespace gatecheck::fuzz
