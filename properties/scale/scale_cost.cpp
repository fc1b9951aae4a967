#include "scale_cost.h"

#include <cmath>

namespace gatecheck {

ScaleCostWeights scale_cost_weights(Device d) {
  if (d == Device::cpu) return {8, 0.5};
  return {256, 8};
}

int64_t reduced_elements(const OpSchema& op, int64_t dim, int64_t gates) {
  int64_t n = 0;
  for (const OpOutput& o : op.outputs)
    if (o.kind != OutputKind::rowwise) n += role_rows(o.role, 0, gates) * role_cols(o.role, dim);
  return n;
}

int64_t scale_cost_units(const OpSchema& op, Device d, int64_t rows, int64_t dim, int64_t gates, int64_t parts) {
  const ScaleCostWeights w = scale_cost_weights(d);
  const double reduced = double(parts) * double(reduced_elements(op, dim, gates));
  return rows * dim + int64_t(std::llround(w.row * double(rows) + w.reduced * reduced));
}

void ScaleCostModel::record(const std::string& impl, const std::string& property, int64_t elements, double seconds) {
  if (elements <= 0 || !(seconds > 0)) return;
  const std::lock_guard<std::mutex> lock(m_);
  for (Sum* s : {&by_pair_[impl + "/" + property], &by_impl_[impl]}) {
    s->elements += double(elements);
    s->seconds += seconds;
  }
}

double ScaleCostModel::rate(const std::string& impl, const std::string& property, std::string* source) const {
  const std::lock_guard<std::mutex> lock(m_);
  auto measured = [&](const std::map<std::string, Sum>& m, const std::string& key) {
    auto it = m.find(key);
    return it == m.end() ? 0.0 : rate_of(it->second);
  };
  if (const double r = measured(by_pair_, impl + "/" + property); r > 0) {
    if (source) *source = "this property's scale cases so far";
    return r;
  }
  if (const double r = measured(by_impl_, impl); r > 0) {
    if (source) *source = "this implementation's scale cases so far";
    return r;
  }
  if (source) *source = "the prior (nothing measured yet)";
  return kScalePriorElementsPerSecond;
}

bool ScaleCostModel::measured(const std::string& impl) const {
  const std::lock_guard<std::mutex> lock(m_);
  auto it = by_impl_.find(impl);
  return it != by_impl_.end() && it->second.seconds > 0;
}

double ScaleCostModel::estimate_seconds(const std::string& impl, const std::string& property, int64_t elements) const {
  return double(elements) / rate(impl, property);
}

}  // namespace gatecheck
