// What a scale case will cost before it runs: its element count over the
// throughput the scale tier has measured so far in this run, for the same
// implementation and property (a repeatable check runs five times, an
// invariance one a batch at a time, so properties differ), else for the same
// implementation, else a deliberately slow prior. A draw whose estimate does
// not fit the time its pair's share has left is not run (scale_check.h): the
// prior lets only cases of modest size run first, and the measured rate then
// admits larger ones as far as they fit.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace gatecheck {

// A case's cost in element-equivalents: its elements plus kScaleRowWeight a
// row, as a row carries work of its own (the index, the plans, the sampled
// oracle's row statistics). On the H200 three cases of 16,776,960 x 1 took
// 2.0 to 3.0 s where a rate learned from wide cases, at 17 units a row,
// predicted 0.14 to 0.40 s: a row costs about 250 elements there.
constexpr int64_t kScaleRowWeight = 256;
inline int64_t scale_cost_units(int64_t rows, int64_t dim) { return rows * dim + kScaleRowWeight * rows; }

// Elements a second assumed before anything was measured: slower than any
// implementation's scale throughput we have seen, so the first case is small.
constexpr double kScalePriorElementsPerSecond = 20e6;

class ScaleCostModel {
 public:
  // A scale case of `elements` (rows x dim) took `seconds` end to end.
  void record(const std::string& impl, const std::string& property, int64_t elements, double seconds);
  // Its estimated seconds for `elements`.
  double estimate_seconds(const std::string& impl, const std::string& property, int64_t elements) const;
  // Has any scale case of `impl` been measured in this run?
  bool measured(const std::string& impl) const;
  // The rate used for it (elements a second), and where from.
  double rate(const std::string& impl, const std::string& property, std::string* source = nullptr) const;

 private:
  struct Sum {
    double elements = 0, seconds = 0;
  };
  static double rate_of(const Sum& s) { return s.seconds > 0 ? s.elements / s.seconds : 0; }
  mutable std::mutex m_;
  std::map<std::string, Sum> by_pair_, by_impl_;
};

}  // namespace gatecheck
