#include "scale_cost.h"

namespace gatecheck {

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
