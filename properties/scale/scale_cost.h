// What a scale case will cost before it runs: its size in element-equivalents
// at the time an element has taken, plus its batch plan's parts at the time
// a part has taken, both learned from the scale cases so far in this run, for
// the same implementation and property (a repeatable check runs five times, an
// invariance one a batch at a time, so properties differ), else for the same
// implementation, else deliberately slow priors. A draw whose estimate does
// not fit the time its pair's share has left is not run (scale_check.h): the
// priors let only cases of modest size run first, and the measured costs then
// admit larger ones as far as they fit.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "../../kernels/op_schema.h"

namespace gatecheck {

// A case's cost in element-equivalents: its elements, plus a weight a row
// (the index, the plans, the sampled oracle's row statistics), plus, for a
// check that runs a batch plan (the invariance properties, split_invariance),
// a weight for each element of the row reductions (the op's gates x dim
// tables and dim columns) a batch: each batch's run makes them, and a split's
// part brings its state, or its gradients, to the host to be combined there.
// The weights are per device, as a row's and a reduction's work is mostly
// host work while an element's cost follows the device:
//  - a row: on the H200 three cases of 16,776,960 x 1 took 2.0 to 3.0 s where
//    a rate learned from wide cases, at 17 units a row, predicted 0.14 to
//    0.40 s: about 250 elements. On the CPU, a least-squares fit of 912
//    split_invariance cases of both ops on host and host-repro gives 2 to 8
//    elements a row.
//  - a reduced element a batch: 0.17 (host) to 0.52 (host-repro) elements on
//    the CPU in that fit (0.5 here), where a 131,072 x 17 case with 61,680
//    gates in 30 parts had been estimated at 0.30 s and took 3.64. With 8 and
//    0.5, no case of the fit took more than 3.7 times what the rate learned
//    from all of its implementation's cases says. On the H200, row_invariance
//    at 4097 x 33 with 4097 gates in 64 batches took 0.78 s where elements and
//    rows alone said 0.01 at that property's rate: about 5 units a reduced
//    element a batch; 8. (At 32, split_invariance's scale tier on cuda-repro
//    ran 0.8 s of its 7.5 s share at 30 s and skipped 8 draws.)
struct ScaleCostWeights {
  double row = 0, reduced = 0;
};
ScaleCostWeights scale_cost_weights(Device d);
// Elements of op's outputs that reduce over rows, for `gates` and `dim`.
int64_t reduced_elements(const OpSchema& op, int64_t dim, int64_t gates);
// parts: the batches of the case's plan (0 for a check without one).
int64_t scale_cost_units(const OpSchema& op, Device d, int64_t rows, int64_t dim, int64_t gates, int64_t parts);

// Elements a second assumed before anything was measured: slower than any
// implementation's scale throughput we have seen, so the first case is small.
constexpr double kScalePriorElementsPerSecond = 20e6;

// A case's calls: its batch plan's parts, or one for a check without a plan.
// Each costs a fixed time of its own (below), so a check without a plan
// learns a time a case beside its rate: on an H100, where a small case of
// rmsnorm_modulate's cuda checks took 10 to 50 ms whatever its size, the rate
// alone put its estimates of later cases at a median 2.3 times short and up
// to 2,938 times; with a case's own time, 1.1 and 26 (180 cases replayed,
// bench/results/scale-cost-per-case/; on the CPU no worse).
int64_t scale_cost_calls(int64_t parts);

// A batch plan's part also costs a fixed time of its own, whatever its size:
// its inputs prepared, its call, its syncs. That time depends on the
// property as much as on the device: on this CPU (2 cores, 60 s of each op
// on host and host-repro, 473 scale cases) row_invariance took 0.6 to 0.9 ms
// a part and split_invariance next to none; on an H100, the device to itself,
// a split through cuda-repro's exchange took 0.2 to 3 ms a part in small
// cases and 10 to 84 ms in large ones, and a case without a plan 10 to 50 ms
// (the GPU's prior, 20 ms, is of that order). So it is learned with the
// rate, for each implementation and property; before a pair has two cases
// that tell the two apart, this prior stands in. Either way parts are given at most half of the
// time measured, unless the cases' calls measured more (ScaleCallTimes: the
// parts' time past what the whole batch's time a row gives their rows): then
// that, from the first case (bench/results/split/scale-parts-heavy/).
double scale_prior_part_seconds(Device d);

// What a case costs: seconds an element-equivalent, and seconds a part.
struct ScaleCostFit {
  double per_unit = 0, per_part = 0;
  double seconds(int64_t units, int64_t parts) const { return per_unit * double(units) + per_part * double(parts); }
};

class ScaleCostModel {
 public:
  // A scale case of `units` (scale_cost_units) in `parts` batches (0: no
  // plan) took `seconds` end to end; `parts_own`: the seconds its parts took
  // of their own, as its calls' times told them apart (ScaleCallTimes), or
  // -1 where they did not.
  void record(const std::string& impl, const std::string& property, int64_t units, int64_t parts, double seconds,
              double parts_own = -1);
  // Its estimated seconds.
  double estimate_seconds(const std::string& impl, const std::string& property, Device d, int64_t units,
                          int64_t parts, std::string* source = nullptr) const;
  // Has any scale case of `impl` been measured in this run?
  bool measured(const std::string& impl) const;
  // True the first time it is asked for `impl`: that scale case is the
  // implementation's first in the run, whose time holds one-time costs, and
  // is not recorded (so the next case probes the rate again). On an H100
  // rmsnorm_modulate's first cuda case, 4097 x 257, took 0.76 to 0.80 s where
  // cases of 10 to 30 M elements after it took 0.01 to 0.05; learned from, it
  // put every later draw of its property at 4 to 1,000 s, and the two
  // properties after it ran no scale case at all
  // (bench/results/split/targets/h100-78b3dbf/rms-cuda.json).
  bool warm_up(const std::string& impl);
  // A scale case of `impl` waited `seconds` for the device (device_gate.h:
  // the small cases under way finish first), its warm-up included: the wait
  // is the gate's, not the implementation's cost, and it is not in `record`.
  void record_wait(const std::string& impl, double seconds);
  // The wait the next scale case of `impl` should expect: the mean of those
  // recorded (0 before any). A draw fits its share only with it: on an H100
  // the scale cases of a 60 s check waited 3 to 5 s in all (up to 0.56 s a
  // case) of its 15 s tier, and the cases that ended past their share were
  // mostly past it by their wait (bench/results/split/targets/h100-3005c8b/).
  double expected_wait(const std::string& impl) const;
  // The costs used for it, and where from: the pair's cases, else the
  // implementation's, else the priors.
  ScaleCostFit fit(const std::string& impl, const std::string& property, Device d, std::string* source = nullptr) const;

 private:
  // The cases of a pair (or an implementation), as the sums the fits need:
  // totals for the rate, and the least squares of relative errors
  // (sum ((t - a u - c p) / t)^2) for the two costs.
  struct Sum {
    int64_t cases = 0;  // cases recorded (each of at least one call: scale_cost_calls)
    double units = 0, parts = 0, seconds = 0;
    double uu = 0, pp = 0, up = 0, u = 0, p = 0;  // weighted by 1 / t^2
    double own_parts = 0, own_seconds = 0;        // the parts whose own time was measured, and that time
  };
  static ScaleCostFit fit_of(const Sum& s, double prior_part);
  mutable std::mutex m_;
  std::map<std::string, Sum> by_pair_, by_impl_;
  std::set<std::string> warmed_;  // implementations whose first case has run
  std::map<std::string, std::pair<int64_t, double>> waits_;  // an implementation's waits: how many, their sum
};

}  // namespace gatecheck
