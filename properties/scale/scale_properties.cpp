#include "scale_properties.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include "../../case/case_spec.h"
#include "../../case/plan_movement.h"
#include "../../harness/scale/scale_session.h"
#include "../checks/property_impls.h"
#include "scale_check_detail.h"
#include "scale_tier.h"
#include "../catalog/property_checks.h"

namespace gatecheck {

namespace {
using detail::add_failure;
using namespace scale_detail;

// Differing rows whose elements are fetched as evidence.
constexpr size_t kEvidenceRows = 16;

// ---- repeatability and invariance ----------------------------------------------

// Row fingerprints of `set` against those of `ref` at rows `b` (b[j] is the
// reference row of row j); evidence from the first differing rows.
Comparison compare_rows(ScaleSession& s, ScaleOutput o, int set, const std::vector<uint64_t>& ref_prints,
                        const std::vector<int64_t>& b, const std::string& where, int64_t* rows_differ) {
  const std::vector<uint64_t> got = s.prints(set, o);
  const int64_t dim = s.scale_case().dim;
  Comparison cmp;
  cmp.tensor = scale_output_name(s.scale_case(), o);
  cmp.dtype = s.scale_case().dtype;
  cmp.cols = dim;
  cmp.bitwise = true;
  cmp.got_side = "sub-batch";  // either may be the wrong one
  cmp.want_side = "full batch";
  cmp.checked = int64_t(b.size()) * dim;
  std::vector<int64_t> differ;
  for (size_t j = 0; j < b.size(); ++j)
    if (got[j] != ref_prints[size_t(b[j])]) differ.push_back(int64_t(j));
  *rows_differ = int64_t(differ.size());
  if (differ.empty()) return cmp;
  differ.resize(std::min(differ.size(), kEvidenceRows));
  std::vector<int64_t> ref_rows;
  for (int64_t j : differ) ref_rows.push_back(b[size_t(j)]);
  const HostTensor mine = s.fetch(set, o, differ), theirs = s.fetch(0, o, ref_rows);
  for (size_t i = 0; i < differ.size(); ++i)
    for (int64_t col = 0; col < dim; ++col) {
      const int64_t e = int64_t(i) * dim + col;
      if (mine.bits(e) == theirs.bits(e)) continue;
      ++cmp.failed;
      const int64_t flat = ref_rows[i] * dim + col;  // batch rows need not be in index order: keep the extent
      cmp.first_bad = cmp.first_bad < 0 ? flat : std::min(cmp.first_bad, flat);
      cmp.last_bad = std::max(cmp.last_bad, flat);
      if (cmp.first.size() < kMaxMismatches) {
        Mismatch m;
        m.tensor = cmp.tensor;
        m.row = ref_rows[i];
        m.col = col;
        m.got_bits = mine.bits(e);
        m.want_bits = theirs.bits(e);
        m.got = mine.value(e);
        m.want = theirs.value(e);
        m.why = where + " (row " + std::to_string(differ[i]) + " of its batch)";
        cmp.first.push_back(m);
      }
    }
  if (cmp.failed == 0) {  // fingerprints differ but the fetched bits agree: a fingerprint collision is ~2^-64
    cmp.failed = *rows_differ;
    Mismatch m;
    m.tensor = cmp.tensor;
    m.row = -1;
    m.why = std::to_string(*rows_differ) + " rows differ by fingerprint";
    cmp.first.push_back(m);
  }
  return cmp;
}

std::vector<StressSetting> schedule(const ScaleCase& c, const ScaleCheckOptions& o, int runs, Device d) {
  return stress_schedule(o.stress_seed ^ c.spec.value_seed, runs, stress_capacity(d));
}

Verdict repeatable_at_scale(const Implementation& impl, const ScaleCase& c, const ScaleCheckOptions& o) {
  Verdict v;
  ScaleSession s(impl, c, 2, o.memory_bytes);
  s.time_calls(o.times);
  const int runs = std::max(2, o.repeat_runs);
  const auto plan = schedule(c, o, runs, impl.device);
  Status st = s.run(0, nullptr, 0, plan[0]);
  if (!st.ok()) return failed_run(impl, s, c, "(call 1)", st);
  std::ostringstream msg;
  for (int k = 1; k < runs && v.passed; ++k) {
    st = s.run(1, nullptr, 0, plan[size_t(k)]);
    if (!st.ok()) return failed_run(impl, s, c, "(call " + std::to_string(k + 1) + ")", st);
    for (ScaleOutput out : every_output(c)) {
      Comparison cmp = s.compare(1, 0, out);
      cmp.got_side = "call " + std::to_string(k + 1);
      cmp.want_side = "call 1";
      v.compared += cmp.checked;
      if (cmp.ok()) continue;
      for (auto& m : cmp.first) m.why = "call " + std::to_string(k + 1) + " vs call 1: " + m.why;
      add_failure(v, cmp);
      const Mismatch& m = cmp.first.front();
      msg << (msg.tellp() > 0 ? "; " : "") << cmp.tensor << ": " << cmp.failed << " elements differ, one at [" << m.row
          << ", " << m.col << "]: call " << k + 1 << " 0x" << std::hex << m.got_bits << " vs call 1 0x" << m.want_bits << std::dec;
    }
    if (!v.passed)
      v.message = head(impl, c) + "call " + std::to_string(k + 1) + " of " + std::to_string(runs) + " (" +
                  plan[size_t(k)].describe() + ") differs from call 1 (unperturbed): " + msg.str();
  }
  return v;
}

void vacuity(Verdict& v, const Movement& mv, const BatchPlan& p, const ScaleCase& c, const char* unit) {
  if (mv.ok()) return;
  v.passed = false;
  v.vacuous = true;
  v.message = "vacuous: " + mv.why_vacuous() + " (" + std::to_string(mv.compared) + " " + unit + " compared, plan " +
              p.kind + " with " + std::to_string(p.batches.size()) + " batches, " + describe(c) +
              "); a pass here would prove nothing";
}

Verdict row_invariance_at_scale(const Implementation& impl, const ScaleCase& c, const ScaleCheckOptions& o) {
  Verdict v;
  const Case shadow = c.shadow();
  const BatchPlan plan = c.plan ? *c.plan : default_plan(shadow);
  ScaleSession s(impl, c, 2, o.memory_bytes);
  s.time_calls(o.times);
  const auto stress = schedule(c, o, int(plan.batches.size()) + 1, impl.device);
  Status st = s.run(0, nullptr, 0, stress[0]);
  if (!st.ok()) return failed_run(impl, s, c, "(full batch)", st);
  const std::vector<int> rowwise = c.op().outputs_of_kind(OutputKind::rowwise);
  const size_t nr = rowwise.size();
  std::vector<std::vector<uint64_t>> full(nr);
  for (size_t i = 0; i < nr; ++i) full[i] = s.prints(0, rowwise[i]);
  std::vector<Comparison> total(nr);
  std::vector<int64_t> rows_differ(nr, 0);
  for (size_t bi = 0; bi < plan.batches.size(); ++bi) {
    const auto& b = plan.batches[bi];
    if (b.empty()) continue;
    st = s.run(1, &b, 0, stress[bi + 1]);
    if (!st.ok()) return failed_run(impl, s, c, "(batch " + std::to_string(bi) + ")", st);
    for (size_t i = 0; i < nr; ++i) {
      int64_t n = 0;
      const std::string where = "batch " + std::to_string(bi) + " (" + std::to_string(b.size()) + " rows, " +
                                stress[bi + 1].describe() + ") vs full batch";
      detail::merge_into(total[i], compare_rows(s, rowwise[i], 1, full[i], b, where, &n));
      rows_differ[i] += n;
    }
  }
  const Movement mv = row_movement(shadow, plan);
  v.compared = mv.compared;
  std::ostringstream msg;
  for (size_t i = 0; i < nr; ++i) {
    if (total[i].ok()) continue;
    add_failure(v, total[i]);
    const Mismatch& m = total[i].first.front();
    msg << (msg.tellp() > 0 ? "; " : "") << total[i].tensor << ": " << rows_differ[i]
        << " rows differ from the full batch's (fingerprints), one at [" << m.row << ", " << m.col << "]: sub-batch 0x"
        << std::hex << m.got_bits << " vs full batch 0x" << m.want_bits << std::dec << " (" << m.why << ")";
  }
  if (!v.passed) v.message = head(impl, c) + "plan " + plan.kind + " with " + std::to_string(plan.batches.size()) + " batches: " + msg.str();
  vacuity(v, mv, plan, c, "rows");
  return v;
}

// One segment-sum output of a sub-batch against the full batch's, on the
// gates whose rows all ran in it (`gates`), by fingerprint; evidence from the
// first differing gates.
Comparison compare_segments(ScaleSession& s, ScaleOutput o, const std::vector<uint64_t>& full,
                            const std::vector<int64_t>& gates, const std::vector<std::vector<int64_t>>& by_gate,
                            size_t bi, size_t batch_rows, const StressSetting& stress, int64_t* gates_differ) {
  const ScaleCase& c = s.scale_case();
  const std::string name = scale_output_name(c, o);
  const std::vector<uint64_t> part = s.prints(1, o);
  std::vector<int64_t> bad;
  for (int64_t k : gates)
    if (part[size_t(k)] != full[size_t(k)]) bad.push_back(k);
  *gates_differ += int64_t(bad.size());
  Comparison cmp;
  cmp.tensor = name;
  cmp.dtype = c.dtype;
  cmp.cols = c.dim;
  cmp.bitwise = true;
  cmp.got_side = "sub-batch";
  cmp.want_side = "full batch";
  cmp.checked = int64_t(gates.size()) * c.dim;
  if (bad.empty()) return cmp;
  bad.resize(std::min(bad.size(), kEvidenceRows));
  const HostTensor mine = s.fetch(1, o, bad), theirs = s.fetch(0, o, bad);
  for (size_t i = 0; i < bad.size(); ++i)
    for (int64_t col = 0; col < c.dim; ++col) {
      const int64_t e = int64_t(i) * c.dim + col;
      if (mine.bits(e) == theirs.bits(e)) continue;
      ++cmp.failed;
      const int64_t flat = bad[i] * c.dim + col;  // gates in the batch's order: keep the extent
      cmp.first_bad = cmp.first_bad < 0 ? flat : std::min(cmp.first_bad, flat);
      cmp.last_bad = std::max(cmp.last_bad, flat);
      if (cmp.first.size() < kMaxMismatches) {
        const size_t n = by_gate[size_t(bad[i])].size();
        Mismatch m;
        m.tensor = name;
        m.row = bad[i];
        m.col = col;
        m.got_bits = mine.bits(e);
        m.want_bits = theirs.bits(e);
        m.got = mine.value(e);
        m.want = theirs.value(e);
        m.why = "gate " + std::to_string(bad[i]) + (n ? " (all its " + std::to_string(n) + " rows" : " (unused") +
                " in batch " + std::to_string(bi) + " of " + std::to_string(batch_rows) + " rows, " + stress.describe() +
                ") vs full batch";
        cmp.first.push_back(m);
      }
    }
  return cmp;
}

Verdict segment_invariance_at_scale(const Implementation& impl, const ScaleCase& c, const ScaleCheckOptions& o) {
  Verdict v;
  const Case shadow = c.shadow();
  const BatchPlan plan = c.plan ? *c.plan : default_plan(shadow);
  const auto by_gate = rows_by_gate(shadow);
  std::vector<int64_t> unused;
  for (size_t k = 0; k < by_gate.size(); ++k)
    if (by_gate[k].empty()) unused.push_back(int64_t(k));
  ScaleSession s(impl, c, 2, o.memory_bytes);
  s.time_calls(o.times);
  const auto stress = schedule(c, o, int(plan.batches.size()) + 1, impl.device);
  Status st = s.run(0, nullptr, 0, stress[0]);
  if (!st.ok()) return failed_run(impl, s, c, "(full batch)", st);
  const std::vector<int> sums = c.op().outputs_of_kind(OutputKind::segment_sum);
  std::vector<std::vector<uint64_t>> full;
  for (int out : sums) full.push_back(s.prints(0, out));
  std::vector<Comparison> total(sums.size());
  std::vector<int64_t> gates_differ(sums.size(), 0);
  for (size_t bi = 0; bi < plan.batches.size(); ++bi) {
    const auto& b = plan.batches[bi];
    std::vector<int64_t> gates = whole_segments(by_gate, shadow, b);
    if (b.empty() || gates.empty()) continue;
    gates.insert(gates.end(), unused.begin(), unused.end());  // +0 in both
    st = s.run(1, &b, 0, stress[bi + 1]);
    if (!st.ok()) return failed_run(impl, s, c, "(batch " + std::to_string(bi) + ")", st);
    // a segment sum's rows are gates: compare the whole-segment gates' fingerprints
    for (size_t i = 0; i < sums.size(); ++i)
      detail::merge_into(total[i], compare_segments(s, sums[i], full[i], gates, by_gate, bi, b.size(), stress[bi + 1],
                                                    &gates_differ[i]));
  }
  const Movement mv = segment_movement(shadow, plan);
  v.compared = mv.compared;
  std::ostringstream msg;
  for (size_t i = 0; i < sums.size(); ++i) {
    if (total[i].ok()) continue;
    add_failure(v, total[i]);
    const Mismatch& m = total[i].first.front();
    msg << (msg.tellp() > 0 ? "; " : "") << total[i].tensor << ": " << gates_differ[i]
        << " whole-segment gates differ from the full batch's, one at [" << m.row << ", " << m.col << "]: sub-batch 0x"
        << std::hex << m.got_bits << " vs full batch 0x" << m.want_bits << std::dec << " (" << m.why << ")";
  }
  if (!v.passed) v.message = head(impl, c) + "plan " + plan.kind + " with " + std::to_string(plan.batches.size()) + " batches: " + msg.str();
  vacuity(v, mv, plan, c, "whole gate segments");
  return v;
}

// ---- memory --------------------------------------------------------------------

// What a memory check looks at: inputs changed, outputs unwritten (two
// output sets, under the two poisons), guard bytes.
enum class MemoryCheck { inputs, writes, guards };

Verdict memory(MemoryCheck what, const Implementation& impl, const ScaleCase& c, const ScaleCheckOptions& o) {
  Verdict v;
  const bool two_sets = what == MemoryCheck::writes;
  ScaleSession s(impl, c, two_sets ? 2 : 1, o.memory_bytes);
  s.time_calls(o.times);
  std::vector<MemoryFinding> found;
  for (int poison = 0; poison < 2; ++poison) {
    const Status st = s.run(two_sets ? poison : 0, nullptr, poison);
    if (!st.ok()) return failed_run(impl, s, c, "(poison " + std::to_string(poison) + ")", st);
    if (what == MemoryCheck::inputs)
      for (auto& f : s.inputs_changed()) found.push_back(f);
    if (what == MemoryCheck::guards)
      for (auto& f : s.guards()) found.push_back(f);
  }
  if (two_sets)
    for (ScaleOutput out : every_output(c)) {
      int64_t checked = 0;
      MemoryFinding f = s.unwritten(0, 1, out, &checked);
      v.compared += checked;
      if (f.count) found.push_back(f);
    }
  else
    v.compared = 2 * int64_t(c.op().inputs.size() + c.op().outputs.size());  // every tensor, twice (as the small case counts)
  for (const auto& f : found) {
    bool dup = false;
    for (const auto& g : v.memory) dup = dup || g.tensor == f.tensor;
    if (dup) continue;
    v.passed = false;
    v.memory.push_back(f);
    if (impl.op->output_index(f.tensor) >= 0) v.failed_outputs.push_back(f.tensor);
  }
  if (!v.passed) {
    std::ostringstream msg;
    for (size_t i = 0; i < v.memory.size(); ++i) msg << (i ? "; " : "") << v.memory[i].detail;
    v.message = head(impl, c) + msg.str();
  }
  return v;
}

}  // namespace

namespace checks {

Verdict scale_repeatable(const Implementation& impl, const ScaleCase& c, const ScaleCheckOptions& o) {
  return repeatable_at_scale(impl, c, o);
}

Verdict scale_row_invariance(const Implementation& impl, const ScaleCase& c, const ScaleCheckOptions& o) {
  return row_invariance_at_scale(impl, c, o);
}

Verdict scale_segment_invariance(const Implementation& impl, const ScaleCase& c, const ScaleCheckOptions& o) {
  return segment_invariance_at_scale(impl, c, o);
}

Verdict scale_inputs_untouched(const Implementation& impl, const ScaleCase& c, const ScaleCheckOptions& o) {
  return memory(MemoryCheck::inputs, impl, c, o);
}

Verdict scale_full_write(const Implementation& impl, const ScaleCase& c, const ScaleCheckOptions& o) {
  return memory(MemoryCheck::writes, impl, c, o);
}

Verdict scale_no_oob_write(const Implementation& impl, const ScaleCase& c, const ScaleCheckOptions& o) {
  return memory(MemoryCheck::guards, impl, c, o);
}

}  // namespace checks

Verdict check_scale_property(const std::string& property, const Implementation& impl, const ScaleCase& c,
                             const ScaleCheckOptions& o) {
  const PropertyInfo& p = property_info(property);
  if (!p.scale)
    throw std::invalid_argument("property '" + property + "' has no scale version (it runs on small cases only)");
  if (impl.op != &c.op())
    throw std::invalid_argument("property '" + property + "': a scale case of " + c.op().name + " given to " +
                                impl.label() + ", an implementation of " + impl.op->name);
  if (const std::string why = case_shape_problem(*impl.op, c.rows, c.dim, c.gates); !why.empty())
    throw std::invalid_argument("property '" + property + "' needs valid input (" + describe(c) + "): " + why);
  Verdict v = p.scale(impl, c, o);
  v.property = property;
  return v;
}

bool scale_device_usable(Device d) {
  if (d == Device::cpu) return true;
  try {
    return make_device_scale_backend()->usable();
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace gatecheck
