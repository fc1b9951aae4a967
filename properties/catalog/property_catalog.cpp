// The property catalog's table (property_catalog.h).
#include "property_catalog.h"

#include <algorithm>
#include <stdexcept>

#include "../../oracles/op_oracles.h"
#include "property_checks.h"

namespace gatecheck {

const std::vector<PropertyInfo>& property_catalog() {
  using namespace checks;
  using K = OutputKind;
  static const std::vector<PropertyInfo> table = {
      {"accuracy", "every output element within the oracle's bound; special values as oracles/SEMANTICS.md says",
       accuracy, scale_accuracy, Reads::every_output, {}, PlanNeed::none, true, 1, ScaleValuesWanted::exact_first},
      {"row_invariance",
       "each row of every row-wise output bit-identical under every batch plan: alone, in any sub-batch, permuted, "
       "reversed",
       row_invariance, scale_row_invariance, Reads::kinds, {K::rowwise}, PlanNeed::rows_move, true, 2,
       ScaleValuesWanted::rounding_sums, true},
      {"segment_invariance",
       "an index value whose rows all fall in one sub-batch, in order, gets bit-identical segment sums",
       segment_invariance, scale_segment_invariance, Reads::kinds, {K::segment_sum}, PlanNeed::segments_move, true, 2,
       ScaleValuesWanted::rounding_sums, true},
      {"repeatable", "several runs bit-identical in every output, the reductions included", repeatable,
       scale_repeatable, Reads::every_output, {}, PlanNeed::none, true, 2, ScaleValuesWanted::rounding_sums, true},
      {"inputs_untouched", "every input unchanged by the call", inputs_untouched, scale_inputs_untouched,
       Reads::inputs},
      {"full_write", "every output element written (two NaN poisons)", full_write, scale_full_write,
       Reads::every_output, {}, PlanNeed::none, true, 2},
      {"no_oob_write", "canaries around every buffer intact", no_oob_write, scale_no_oob_write, Reads::every_buffer},
      {"error_inputs", "each bad input rejected with a message naming the argument and its value, nothing written",
       error_inputs, nullptr, Reads::rejections, {}, PlanNeed::none, true, 1, ScaleValuesWanted::rounding, false,
       nullptr, error_inputs_stand_in},
      {"split_invariance",
       "row reductions bit-identical however the rows are split into parts (ranks, micro-batches) whose partials "
       "are combined in rank order: by the implementation's declared exchange, else summed in fp32 as frameworks do",
       split_invariance, scale_split_invariance, Reads::kinds, {K::segment_sum, K::all_rows_sum}, PlanNeed::split, false, 2,
       ScaleValuesWanted::rounding_sums, false,
       "each split is combined as frameworks do (the parts' gradients summed in fp32 in rank order, then rounded to "
       "the dtype), which matches the full batch only where that sum is exact; a kernel that keeps the property "
       "declares an exchange (docs/plugins.md)"},
      {"eager_exact", "outputs bitwise equal to a model of torch eager's roundings, where the op has one", eager_exact,
       nullptr, Reads::eager_outputs, {}, PlanNeed::none, false},
  };
  return table;
}

const PropertyInfo* find_property(const std::string& name) {
  for (const auto& p : property_catalog())
    if (name == p.name) return &p;
  return nullptr;
}

const PropertyInfo& property_info(const std::string& name) {
  if (const PropertyInfo* p = find_property(name)) return *p;
  throw std::invalid_argument(unknown_property(name));
}

const std::vector<std::string>& default_properties() {
  static const std::vector<std::string> v = [] {
    std::vector<std::string> n;
    for (const auto& p : property_catalog())
      if (p.by_default) n.push_back(p.name);
    return n;
  }();
  return v;
}

const std::vector<std::string>& all_properties() {
  static const std::vector<std::string> v = [] {
    std::vector<std::string> n;
    for (const auto& p : property_catalog()) n.push_back(p.name);
    return n;
  }();
  return v;
}

bool is_property(const std::string& p) { return find_property(p) != nullptr; }

std::string unknown_property(const std::string& p) {
  std::string known;
  for (const auto& k : all_properties()) known += (known.empty() ? "" : ", ") + k;
  return "unknown property '" + p + "' (" + known + ")";
}

std::vector<int> outputs_read(const PropertyInfo& p, const OpSchema& op) {
  std::vector<int> v;
  switch (p.reads) {
    case Reads::rejections:
    case Reads::inputs: break;
    case Reads::every_buffer:
    case Reads::every_output:
      for (size_t i = 0; i < op.outputs.size(); ++i) v.push_back(int(i));
      break;
    case Reads::kinds:
      for (size_t i = 0; i < op.outputs.size(); ++i)
        if (std::find(p.kinds.begin(), p.kinds.end(), op.outputs[i].kind) != p.kinds.end()) v.push_back(int(i));
      break;
    case Reads::eager_outputs:
      if (const OpOracle* o = find_op_oracle(op); o && o->eager_model)
        for (const auto& name : o->eager_outputs) v.push_back(op.output_index(name));
      break;
  }
  return v;
}

bool applies_to(const PropertyInfo& p, const OpSchema& op) {
  return (p.reads != Reads::kinds && p.reads != Reads::eager_outputs) || !outputs_read(p, op).empty();
}

std::vector<std::string> default_properties_for(const OpSchema& op) {
  std::vector<std::string> v;
  for (const auto& p : property_catalog())
    if (p.by_default && applies_to(p, op)) v.push_back(p.name);
  return v;
}

}  // namespace gatecheck
