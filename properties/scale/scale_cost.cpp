#include "scale_cost.h"

#include <algorithm>
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

double scale_prior_part_seconds(Device d) { return d == Device::cpu ? 0.5e-3 : 20e-3; }

namespace {
// The most of a pair's time a measured part's own time may take: what is left
// keeps an element's time positive.
constexpr double kMaxMeasuredPartShare = 0.95;
}  // namespace

int64_t scale_cost_calls(int64_t parts) { return parts > 0 ? parts : 1; }

void ScaleCostModel::record(const std::string& impl, const std::string& property, int64_t units, int64_t parts,
                            double seconds, double parts_own) {
  if (units <= 0 || !(seconds > 0)) return;
  const std::lock_guard<std::mutex> lock(m_);
  const double u = double(units), p = double(scale_cost_calls(parts)), w = 1.0 / (seconds * seconds);
  for (Sum* s : {&by_pair_[impl + "/" + property], &by_impl_[impl]}) {
    ++s->cases;
    s->units += u;
    s->parts += p;
    s->seconds += seconds;
    s->uu += u * u * w;
    s->pp += p * p * w;
    s->up += u * p * w;
    s->u += u * seconds * w;
    s->p += p * seconds * w;
    if (parts > 0 && parts_own >= 0) {
      s->own_parts += p;
      s->own_seconds += std::min(parts_own, seconds);
    }
  }
}

ScaleCostFit ScaleCostModel::fit_of(const Sum& s, double prior_part) {
  if (s.cases == 0) return {1.0 / kScalePriorElementsPerSecond, prior_part};  // (never: a pair is fitted once it has a case)
  // A part's time: the least squares of both costs at once, where the cases
  // tell them apart (their parts and elements not in one proportion), never
  // a credit; else the prior's. At most half of all the time measured, and
  // the rest is the elements', so that the estimates of the cases so far add
  // up to the time they took. (Replayed over 948 CPU scale cases, this fell
  // short by more than 4 times on 2 where the rate alone did on 58:
  // bench/results/split/scale-parts-cpu/.)
  double c = prior_part;
  const double det = s.uu * s.pp - s.up * s.up;
  if (s.cases >= 2 && det > 1e-9 * s.uu * s.pp) c = std::max(0.0, (s.uu * s.p - s.up * s.u) / det);
  c = std::min(c, 0.5 * s.seconds / s.parts);
  // Where the cases' calls measured a part's own time and it is more (a GPU
  // exchange's part: about 20 ms), that: the split above, of a total, can give
  // a small first case's part time to its elements, and then every larger draw
  // looks a hundred times too slow to run. Held under all of the time measured.
  if (s.own_parts > 0) c = std::max(c, std::min(s.own_seconds / s.own_parts, kMaxMeasuredPartShare * s.seconds / s.parts));
  return {(s.seconds - c * s.parts) / s.units, c};
}

ScaleCostFit ScaleCostModel::fit(const std::string& impl, const std::string& property, Device d,
                                 std::string* source) const {
  const double prior_part = scale_prior_part_seconds(d);
  const std::lock_guard<std::mutex> lock(m_);
  if (auto it = by_pair_.find(impl + "/" + property); it != by_pair_.end()) {
    if (source) *source = "this property's scale cases so far";
    return fit_of(it->second, prior_part);
  }
  if (auto it = by_impl_.find(impl); it != by_impl_.end()) {
    if (source) *source = "this implementation's scale cases so far";
    return fit_of(it->second, prior_part);
  }
  if (source) *source = "the prior (nothing measured yet)";
  return {1.0 / kScalePriorElementsPerSecond, prior_part};
}

bool ScaleCostModel::warm_up(const std::string& impl) {
  const std::lock_guard<std::mutex> lock(m_);
  return warmed_.insert(impl).second;
}

void ScaleCostModel::record_wait(const std::string& impl, double seconds) {
  const std::lock_guard<std::mutex> lock(m_);
  auto& w = waits_[impl];
  ++w.first;
  w.second += std::max(0.0, seconds);
}

double ScaleCostModel::expected_wait(const std::string& impl) const {
  const std::lock_guard<std::mutex> lock(m_);
  const auto it = waits_.find(impl);
  return it == waits_.end() ? 0.0 : it->second.second / double(it->second.first);
}

bool ScaleCostModel::measured(const std::string& impl) const {
  const std::lock_guard<std::mutex> lock(m_);
  return by_impl_.count(impl) > 0;
}

double ScaleCostModel::estimate_seconds(const std::string& impl, const std::string& property, Device d,
                                        int64_t units, int64_t parts, std::string* source) const {
  return fit(impl, property, d, source).seconds(units, scale_cost_calls(parts));
}

}  // namespace gatecheck
