// How long the benchmark warms up before each timed measurement.
#pragma once

namespace gatecheck {
namespace bench {

// At least `runs` untimed runs, and more until `min_ms` of wall time has
// passed: ten runs of a 4097-row shape take a quarter of a millisecond, too
// little after the host-side allocation and filling of a new shape's buffers
// (the first shape of each size timed 1-8 us slow, ours and the copy alike,
// on the H200).
struct Warmup {
  int runs = 10;
  double min_ms = 20.0;
};

}  // namespace bench
}  // namespace gatecheck
