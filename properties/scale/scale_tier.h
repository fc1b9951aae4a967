// The scale tier: a share of every check budget goes to cases drawn at scale
// (case/scale_case.h), from a ladder around hardware and model limits:
//  - rows at the grid's edges: 65,535 / 65,536 / 65,537 (a kernel with one
//    row a block meets the 65,535-block limit of a grid's y and z), and 4097,
//    8192, 32768, 131072, 262144;
//  - elements at the edges of one element a thread in 256-thread blocks
//    (65,535 x 256 and around it) and past 2^31 - 1 (int32 offsets and thread
//    ids), where the device has the memory;
//  - dims of the models (3072, 5376, 8192) and awkward ones (primes, and
//    neighbours of vector widths: 3071, 3073, 4093, 8191, ...);
//  - long segments (one gate holding from a few 256-row tiles up to 65,536
//    rows) and many gates (rows/3, and one gate per row);
//  - every index pattern and batch-plan kind.
// On the CPU, dims stay small so that rows past 65,536 stay cheap, but for
// the model-dims rung, which draws the same wide dims with a few rows (at most
// 2^20 elements a tensor).
//
// The schedule (ScaleShare) is decided per time slice or per case index, so
// a parallel engine can keep one per worker; scale case j of a property is
// draw_scale_case(seed, property, j, limits) whatever ran before it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "../../case/scale_case.h"
#include "../../kernels/gate_residual.h"

namespace gatecheck {

// Default shares of each implementation x property budget. Lower on the CPU,
// where a scale case costs far more of the budget than on a GPU.
constexpr double kDefaultScaleShareCuda = 0.25;
constexpr double kDefaultScaleShareCpu = 0.15;

struct ScaleOptions {
  bool enabled = false;     // off for library callers; `gatecheck check` turns it on
  double share = -1;        // of each implementation x property budget; < 0: the device's default
  uint64_t memory_bytes = 0;  // the largest session; 0: 60% of the memory free where it runs (at run start)
  int repeat_runs = 5;      // repeatable at scale: one reference run and 4 under scheduling stress
  // A scale case runs with no small case beside it (engine/device_gate.h): always on a GPU;
  // on the CPU where this says so (the cases share the cores otherwise).
  bool alone_on_cpu = false;
};
double scale_share_for(const ScaleOptions& o, Device d);

// split_invariance at scale brings each row reduction (gates x dim
// elements) and, through a declared exchange, a state of it for each of up
// to 64 parts to the host: its draws keep gates x dim within this.
constexpr int64_t kScaleSplitTableElements = int64_t(1) << 20;

// Properties with a scale version (properties/scale_properties.h); the others
// (error_inputs, eager_exact) run small cases only.
bool has_scale_version(const std::string& property);
// Output sets a property's scale check keeps at once (1, or 2 to compare runs).
int scale_output_sets(const std::string& property);

// What the draws may reach on one device, fixed at the start of a run.
struct ScaleLimits {
  Device device = Device::cpu;
  int64_t max_elements = 0;   // a row tensor's elements
  uint64_t memory_bytes = 0;  // a session's bytes
  std::string past_2_31_note; // why no case past 2^31 elements is drawn ("" when they are)
};
ScaleLimits scale_limits(Device d, const ScaleOptions& o);

// Scale case `index` of `property` under `seed`: deterministic given the
// limits. Cases 0, 1 and 2 open with the grid's rows, a case past 2^31
// elements (on a GPU with the memory; else the 65,535 x 256 edge) and a long
// segment (on the CPU, cases 0 to 3: the grid's rows, wide rows, a long
// segment, many gates); later ones take a rung by weight.
// Cases of op (its tensors sized by role, its scalars drawn, exact values only
// where its oracle has them); the first form is gate_residual's.
ScaleSpec draw_scale_case(const OpSchema& op, uint64_t seed, const std::string& property, int64_t index,
                          const ScaleLimits& l);
// The same draw, stopped once its shape (dtype, rows, dim, gates, pattern)
// is known when `keep(shape)` says no: nullopt. The rest of a draw (an
// invariance property's plan, checked on the index it builds) costs seconds
// at millions of rows, so a budget judges the shape first. When keep says
// yes the result is draw_scale_case's, bit for bit.
std::optional<ScaleSpec> draw_scale_case_if(const OpSchema& op, uint64_t seed, const std::string& property,
                                            int64_t index, const ScaleLimits& l,
                                            const std::function<bool(const ScaleSpec&)>& keep);
ScaleSpec draw_scale_case(uint64_t seed, const std::string& property, int64_t index, const ScaleLimits& l);

// The share rule for one implementation x property pair.
class ScaleShare {
 public:
  ScaleShare(double share, bool time_budget) : share_(share), time_budget_(time_budget) {}
  // Is the next case a scale case? With a time budget: when the scale tier
  // has had less than `share` of the pair's time so far. With a case budget:
  // case n (counting both tiers from 0) is when floor((n + 1) * share) grows.
  bool due(double pair_seconds, int64_t cases_so_far) const;
  void ran(double seconds) {
    ++cases_;
    seconds_ += seconds;
  }
  void spent(double seconds) { seconds_ += seconds; }  // on a draw that did not run (skipped)
  int64_t cases() const { return cases_; }
  double seconds() const { return seconds_; }

 private:
  double share_;
  bool time_budget_;
  int64_t cases_ = 0;
  double seconds_ = 0;
};

// The hardware edges the coverage report counts cases past.
const std::vector<std::string>& scale_edges();
std::vector<std::string> edges_passed(const ScaleCase& c);

struct ScaleCoverage {
  std::map<std::string, double> shares;  // device -> share used ("cpu", "cuda")
  int64_t cases = 0;                     // scale cases run
  double seconds = 0;
  int64_t max_rows = 0, max_dim = 0, max_segment = 0, max_elements = 0;
  std::map<std::string, int64_t> past;     // edge -> cases past it
  std::map<std::string, int64_t> rungs;    // ladder rung -> cases
  std::map<int64_t, int64_t> wide_dims;    // dim -> cases, dims of 1,000 and more (generators.h)
  std::map<std::string, int64_t> skipped;  // why a drawn case did not run -> count
  std::map<std::string, std::string> notes;  // device -> what the limits left out
  void add(const ScaleCase& c, double seconds);
  void add(const ScaleCoverage& other);  // its cases and skips (shares and notes are the run's)
};

}  // namespace gatecheck
