// inputs_untouched, full_write and no_oob_write: judged from the runner's
// guarded, poisoned buffers (harness/runner.h). Each case runs twice, under
// two different poisons: an output element is unwritten only if it still
// holds the poison both times (a correct value can equal one poison by
// coincidence, never both).
#include <sstream>

#include "../../harness/run/stage_clock.h"
#include "property_impls.h"

namespace gatecheck::checks {

using namespace detail;

namespace {

struct TwoRuns {
  RunResult a, b;  // poison 0, poison 1
};

TwoRuns run_twice(const Implementation& impl, const Case& c, const PropertyOptions& o) {
  RunOptions o0, o1;
  o0.poison = 0;
  o1.poison = 1;
  TwoRuns r{run(impl, c, o, o0), run(impl, c, o, o1)};
  device_done(o);
  return r;
}

// Keeps the findings of one kind from both runs (deduplicated by tensor).
Verdict from_findings(const Implementation& impl, const Case& c, const TwoRuns& r, MemoryFinding::Kind kind) {
  Verdict v;
  for (const RunResult* run : {&r.a, &r.b})
    if (!run->status.ok()) return run_failed(c, impl.label(), run->status);
  const StageTimer t(Stage::compare);
  for (const RunResult* run : {&r.a, &r.b})
    for (const auto& f : run->memory) {
      if (f.kind != kind) continue;
      bool dup = false;
      for (const auto& g : v.memory) dup = dup || g.tensor == f.tensor;
      if (dup) continue;
      v.passed = false;
      v.memory.push_back(f);
      if (c.op->output_index(f.tensor) >= 0) v.failed_outputs.push_back(f.tensor);
    }
  // every input and output checked, twice
  v.compared = 2 * int64_t(c.op->inputs.size() + c.op->outputs.size());
  if (!v.passed) {
    std::ostringstream s;
    s << impl.label() << " on " << describe(c) << ": ";
    for (size_t i = 0; i < v.memory.size(); ++i) s << (i ? "; " : "") << v.memory[i].detail;
    v.message = s.str();
  }
  return v;
}

}  // namespace

Verdict inputs_untouched(const Implementation& impl, const Case& c, const PropertyOptions& o) {
  return from_findings(impl, c, run_twice(impl, c, o), MemoryFinding::input_changed);
}

Verdict no_oob_write(const Implementation& impl, const Case& c, const PropertyOptions& o) {
  return from_findings(impl, c, run_twice(impl, c, o), MemoryFinding::oob_write);
}

Verdict full_write(const Implementation& impl, const Case& c, const PropertyOptions& o) {
  const TwoRuns r = run_twice(impl, c, o);
  Verdict v;
  for (const RunResult* run : {&r.a, &r.b})
    if (!run->status.ok()) return run_failed(c, impl.label(), run->status);
  const StageTimer t(Stage::compare);
  const uint32_t p0 = poison_bits(c.dtype, 0), p1 = poison_bits(c.dtype, 1);
  for (size_t k = 0; k < c.op->outputs.size(); ++k) {
    const char* name = c.op->outputs[k].name;
    const HostTensor& t0 = r.a.outputs.tensors[k];
    const HostTensor& t1 = r.b.outputs.tensors[k];
    int64_t first = -1, count = 0;
    for (int64_t i = 0; i < t0.numel(); ++i)
      if (t0.bits(i) == p0 && t1.bits(i) == p1) {
        if (first < 0) first = i;
        ++count;
      }
    v.compared += t0.numel();
    if (count == 0) continue;
    const int64_t cols = t0.cols ? t0.cols : 1;
    std::ostringstream d;
    d << count << " of " << t0.numel() << " elements of " << name
      << " were never written (they kept both poisons), first at [" << first / cols << ", " << first % cols << "]";
    v.passed = false;
    v.failed_outputs.push_back(name);
    v.memory.push_back({MemoryFinding::unwritten, name, first, count, d.str()});
  }
  if (!v.passed) {
    std::ostringstream s;
    s << impl.label() << " on " << describe(c) << ": ";
    for (size_t i = 0; i < v.memory.size(); ++i) s << (i ? "; " : "") << v.memory[i].detail;
    v.message = s.str();
  }
  return v;
}

}  // namespace gatecheck::checks
