// The sweep's phases (sweep.h), one implementation at a time. Internal to
// properties/sweep*.cpp.
#pragma once

#include <cstdio>
#include <string>

#include "../case/case_spec.h"
#include "../oracles/oracle.h"
#include "../properties/checks/properties.h"
#include "sweep.h"

namespace gatecheck::sweep_detail {

// Counts every failed comparison of an implementation, and keeps the first
// `keep` of each check (0: all), with where they differ.
class FailureSink {
 public:
  FailureSink(SweepImplResult* r, size_t keep) : r_(r), keep_(keep) {}
  // Counts it in r->failed_by_check; true if it is to be kept (then call keep()).
  bool count(const std::string& check);
  void keep(SweepFailure f) { r_->failures.push_back(std::move(f)); }

 private:
  SweepImplResult* r_;
  size_t keep_;
};

// "0x3f80": an element's bits, as the reports print them.
inline std::string hex_bits(uint32_t bits) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%x", unsigned(bits));
  return b;
}

// A failed property check on a case of `full_rows` rows under `plan`, as the
// report keeps it: the verdict's message, its first failed output and where
// that output first differs.
SweepFailure plan_failure(const char* property, const Verdict& v, bool claimed, uint64_t seed, int64_t full_rows,
                          const BatchPlan& plan);

// The sweep's data as a generator spec (the prior art's N(0,1), gate x 0.1,
// each row a uniform gate of `gates`, from gatecheck's own generator), and
// that spec made into a case without a plan.
CaseSpec sweep_spec(const SweepGrid& g, int64_t rows, int64_t dim, uint64_t seed);
Case sweep_case(const CaseSpec& s);

// Phases on one (seed, n) case already in a runner with its full outputs.
// all_rows also runs params_repeatable (the full batch again).
void all_rows(BatchRunner& r, const Subject& s, uint64_t seed, InvarianceResult* out, FailureSink* sink,
              const std::function<bool()>& stop);
void full_vs_sub(BatchRunner& r, const Subject& s, const SweepGrid& g, uint64_t seed, InvarianceResult* out,
                 FailureSink* sink, const std::function<bool()>& stop);
void batch_size_sweep(BatchRunner& r, const Subject& s, uint64_t seed, InvarianceResult* out, FailureSink* sink,
                      const std::function<bool()>& stop);
// segment_invariance (the property) on the case, each gate's rows as a batch
// of their own and the used gates split in two batches.
void segments(const Case& c, const Subject& s, uint64_t seed, InvarianceResult* out, FailureSink* sink);
// The splits split_invariance is checked on for a case of the sweep: two
// contiguous halves and 8 micro-batches (gradient accumulation, a sharded
// batch), rows dealt to 4 ranks in turn (a distributed sampler), and each
// row in a random one of 64 ranks (from `seed`); no more parts than rows.
std::vector<BatchPlan> sweep_splits(const Case& c, uint64_t seed);
// split_invariance (the property) on the case under each of sweep_splits(),
// the parts combined by the implementation's declared exchange, else the
// framework's fp32 sum in rank order.
void splits(const Case& c, const Subject& s, uint64_t seed, InvarianceResult* out, FailureSink* sink);

// Accuracy of the full outputs against the oracle (shared by implementations).
void accuracy(const Outputs& got, const Reference& ref, const Outputs& eager, const Subject& s, const Case& c,
              uint64_t seed, AccuracyAt* out, FailureSink* sink);

}  // namespace gatecheck::sweep_detail
