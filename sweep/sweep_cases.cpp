// The sweep's cases as generator specs, and the corpus case that replays a
// failed comparison. The prior art's data come from torch's generators; ours
// from gatecheck's, with the same distributions and the same seed numbers,
// so that every case is a spec a corpus file can hold and replay anywhere.
#include "../properties/catalog/property_roles.h"
#include "sweep_detail.h"

#include "../case/case_json.h"
#include "../properties/checks/properties.h"

namespace gatecheck {

namespace sweep_detail {

CaseSpec sweep_spec(const SweepGrid& g, int64_t rows, int64_t dim, uint64_t seed) {
  CaseSpec s;
  s.op = g.op;
  s.dtype = g.dtype;
  s.rows = rows;
  s.dim = dim;
  s.gates = g.gates;
  s.index_pattern = "uniform";  // the prior art: a uniform timestep of 3 and modality of 3 a row
  s.value_class = "normal";     // N(0,1); the gate x 0.1
  s.plan_kind = "singletons";   // (a file's own plan replaces it)
  // One stream for the index and one for the values, numbered from the
  // prior art's seed as its generators are (seed * 1000 + salt).
  s.index_seed = seed * 1000 + 1;
  s.value_seed = seed * 1000 + 2;
  s.plan_seed = 0;
  return s;
}

Case sweep_case(const CaseSpec& s) {
  Case c = make_case_from_spec(s, /*max_singletons=*/2);
  c.plan.reset();
  // The prior art runs each op at its default scalars (rmsnorm's eps 1e-6);
  // a corpus file keeps them beside the spec.
  for (size_t i = 0; i < c.op->scalars.size(); ++i) c.scalars[i] = c.op->scalars[i].default_value;
  return c;
}

}  // namespace sweep_detail

using namespace sweep_detail;

SweepReplay make_replay(const Subject& s, const SweepGrid& g, const SweepFailure& f) {
  const bool acc = judged_against_reference(f.check);
  CaseSpec spec = sweep_spec(g, f.full_rows, acc ? g.accuracy_dim : g.dim, f.seed);
  SweepReplay r;
  if (f.full_rows * spec.dim > kMaxCaseElements) {
    const int64_t fit = kMaxCaseElements / f.full_rows;
    const int64_t dim = fit >= 8 ? fit / 8 * 8 : fit;
    r.note = "dim " + std::to_string(spec.dim) + " made " + std::to_string(dim) + " to fit a corpus file (at most " +
             std::to_string(kMaxCaseElements) + " elements a tensor); ";
    spec.dim = dim;
  }
  Case c = sweep_case(spec);
  if (f.plan) c.plan = *f.plan;
  const Verdict v = check_property(f.property, s, c);
  r.fails = !v.passed;
  if (!r.fails && spec.dim != (acc ? g.accuracy_dim : g.dim)) {
    r.note += "the comparison passes there, so no file replays it";
    return r;
  }
  r.note += r.fails ? "the replay fails, as it must" : "the replay passed: the difference did not come back on demand";
  CaseFile file{c, spec, FailureRecord{s.name, device_name(s.device), f.property, f.detail, "", f.claimed, ""}, ""};
  file.note = "gatecheck sweep: " + f.check + " (seed " + std::to_string(f.seed) + ") on " + s.label() + ": " + f.detail;
  r.file = std::move(file);
  return r;
}

}  // namespace gatecheck
