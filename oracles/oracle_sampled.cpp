#include "oracle_sampled.h"

#include <stdexcept>

#include "op_oracles.h"

namespace gatecheck {

namespace {
void check_in(const std::vector<int64_t>& v, int64_t n, const char* what) {
  for (int64_t x : v)
    if (x < 0 || x >= n)
      throw std::invalid_argument(std::string("oracle_sampled: ") + what + " " + std::to_string(x) + " out of range");
}
}  // namespace

SampledReference sampled_shape(const ScaleCase& c, const ScaleSample& s) {
  check_in(s.rows, c.rows, "row");
  check_in(s.gates, c.gates, "gate");
  check_in(s.cols, c.dim, "column");
  SampledReference ref;
  for (const auto& o : c.op().outputs) {
    SampledOutput so;
    if (o.role == Role::row) {
      so.labels = s.rows;
      for (int64_t j = 0; j < c.dim; ++j) so.cols.push_back(j);
    } else {
      so.labels = o.role == Role::table ? s.gates : std::vector<int64_t>{0};
      so.cols = s.cols;
    }
    so.want.resize(so.labels.size() * so.cols.size());
    ref.outputs.push_back(std::move(so));
  }
  return ref;
}

SampledReference oracle_sampled(const ScaleCase& c, const ScaleSample& s) {
  const OpOracle& o = op_oracle(c.op());
  if (!o.sampled) throw std::invalid_argument(std::string("the oracle has no sampler for op '") + c.op().name + "'");
  return o.sampled(c, s);
}

}  // namespace gatecheck
