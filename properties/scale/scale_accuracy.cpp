// accuracy at scale (scale_properties.h): exact values element for element
// against their exact-by-construction results (ops whose oracle has them);
// rounding values against the op's sampled float64 oracle
// (oracles/oracle_sampled.h), on a sample whose scope the message states.
#include <algorithm>
#include <sstream>

#include "../../case/prng.h"
#include "../../oracles/op_oracles.h"
#include "../../oracles/oracle_sampled.h"
#include "../checks/property_impls.h"
#include "../catalog/property_checks.h"
#include "scale_check_detail.h"
#include "scale_properties.h"

namespace gatecheck {

namespace {

using detail::add_failure;
using namespace scale_detail;

// Terms the sampled oracle may sum a gate (host float64 work).
constexpr int64_t kSampledGateTerms = int64_t(1) << 22;
constexpr int kRandomSampleRows = 48;


Verdict accuracy_exact(const Implementation& impl, const ScaleCase& c, ScaleSession& s) {
  Verdict v;
  std::ostringstream msg;
  for (ScaleOutput o : every_output(c)) {
    const Comparison cmp = s.exact(0, o);
    v.compared += cmp.checked;
    if (cmp.ok()) continue;
    add_failure(v, cmp);
    const Mismatch& m = cmp.first.front();
    msg << (msg.tellp() > 0 ? "; " : "") << cmp.tensor << ": " << cmp.failed << " of " << cmp.checked
        << " elements differ from their exact value, first [" << m.row << ", " << m.col << "] got " << m.got
        << " want " << m.want;
  }
  if (!v.passed) v.message = head(impl, c) + msg.str() + " (exact values: every element checked)";
  return v;
}

// The sampled rows: first and last, those at the grid and offset edges, and random ones.
std::vector<int64_t> sample_rows(const ScaleCase& c) {
  std::vector<int64_t> rows = {0, 1, 2, c.rows - 3, c.rows - 2, c.rows - 1, 65534, 65535, 65536};
  if (c.dim > 0) {
    const int64_t es = dtype_size(c.dtype);
    for (int64_t e : {int64_t(65535) * 256, int64_t(1) << 31, (int64_t(1) << 32) / es})
      for (int64_t d : {-1, 0, 1}) rows.push_back(e / c.dim + d);
  }
  Prng rng(c.spec.value_seed ^ 0x5a3f1e0dull);
  for (int i = 0; i < kRandomSampleRows; ++i) rows.push_back(rng.below(std::max<int64_t>(c.rows, 1)));
  rows.erase(std::remove_if(rows.begin(), rows.end(), [&](int64_t r) { return r < 0 || r >= c.rows; }), rows.end());
  sort_unique(rows);
  return rows;
}

// Rows back to case rows, columns to case columns, in a comparison made on a sample.
void relabel(Comparison& cmp, const std::vector<int64_t>& rows, const std::vector<int64_t>* cols, int64_t dim) {
  const int64_t w = cmp.cols ? cmp.cols : 1;
  auto col = [&](int64_t j) { return cols ? (*cols)[size_t(j)] : j; };
  for (auto& m : cmp.first)
    if (m.row >= 0) {
      m.col = col(m.col);
      m.row = rows[size_t(m.row)];
    }
  auto flat = [&](int64_t f) { return f < 0 ? f : rows[size_t(f / w)] * dim + col(f % w); };
  cmp.first_bad = flat(cmp.first_bad);
  cmp.last_bad = flat(cmp.last_bad);
  cmp.cols = dim;
}

// The sample: rows (sample_rows), the gates they touch with the first and
// last and a few unused ones, and the columns the sums are checked on: every
// one, or as many as keep the per-gate sums within kSampledGateTerms.
ScaleSample sample_of(const ScaleCase& c) {
  ScaleSample smp;
  smp.rows = sample_rows(c);
  std::vector<int64_t> count(size_t(c.gates), 0);
  for (int64_t k : c.index) ++count[size_t(k)];
  std::vector<int64_t>& gates = smp.gates;
  gates = {0, c.gates - 1};
  for (int64_t r : smp.rows) gates.push_back(c.index[size_t(r)]);
  for (int64_t k = 0, unused = 0; k < c.gates && unused < 8; ++k)
    if (count[size_t(k)] == 0) gates.push_back(k), ++unused;
  gates.erase(std::remove_if(gates.begin(), gates.end(), [&](int64_t k) { return k < 0 || k >= c.gates; }), gates.end());
  sort_unique(gates);
  int64_t terms = 0;
  for (int64_t k : gates) terms += count[size_t(k)];
  std::vector<int64_t>& cols = smp.cols;
  const int64_t ncols = terms == 0 ? c.dim : std::min(c.dim, std::max<int64_t>(2, kSampledGateTerms / terms));
  if (ncols >= c.dim) {
    for (int64_t j = 0; j < c.dim; ++j) cols.push_back(j);
  } else {
    cols = {0, c.dim - 1};
    Prng rng(c.spec.value_seed ^ 0xc01ull);
    while (int64_t(cols.size()) < ncols) cols.push_back(rng.below(c.dim)), sort_unique(cols);
  }
  return smp;
}

// What the sample covered, for the message: "every element of 60 of 65537
// rows; grad_gate of 9 gates on 17 of 17 columns, each summed over all its rows".
std::string sample_scope(const ScaleCase& c, const ScaleSample& smp, const SampledReference& ref) {
  std::string rows, gates, cols, skipped;
  for (size_t o = 0; o < ref.outputs.size(); ++o) {
    const char* name = c.op().outputs[o].name;
    const Role role = c.op().outputs[o].role;
    std::string& list = ref.outputs[o].skipped.empty() ? (role == Role::table ? gates : role == Role::column ? cols : rows)
                                                         : skipped;
    list += (list.empty() ? "" : ", ") + std::string(name);
  }
  std::string s = "every element of " + std::to_string(smp.rows.size()) + " of " + std::to_string(c.rows) + " rows";
  const std::string on = " on " + std::to_string(smp.cols.size()) + " of " + std::to_string(c.dim) + " columns";
  if (!gates.empty()) s += "; " + gates + " of " + std::to_string(smp.gates.size()) + " gates" + on + ", each summed over all its rows";
  if (!cols.empty()) s += "; " + cols + on + ", each summed over every row";
  if (!skipped.empty()) s += "; not judged: " + skipped;
  return s;
}

Verdict accuracy_sampled(const Implementation& impl, const ScaleCase& c, ScaleSession& s) {
  Verdict v;
  const ScaleSample smp = sample_of(c);
  const SampledReference ref = oracle_sampled(c, smp);
  std::ostringstream msg;
  auto judge = [&](Comparison cmp) {
    v.compared += cmp.checked;
    if (cmp.ok()) return;
    add_failure(v, cmp);
    const Mismatch& m = cmp.first.front();
    msg << (msg.tellp() > 0 ? "; " : "") << cmp.tensor << ": " << cmp.failed << " of " << cmp.checked
        << " sampled elements outside the oracle bound, first [" << m.row << ", " << m.col << "] got " << m.got
        << " want " << m.want << " bound " << m.bound;
  };
  for (ScaleOutput o : every_output(c)) {
    const SampledOutput& want = ref.outputs[size_t(o)];
    if (!want.skipped.empty()) continue;  // named in the scope
    const HostTensor rows = s.fetch(0, o, want.labels);
    const bool all_cols = int64_t(want.cols.size()) == c.dim;
    HostTensor got(c.dtype, int64_t(want.labels.size()), int64_t(want.cols.size()));
    if (all_cols) {
      got = rows;
    } else {
      for (size_t k = 0; k < want.labels.size(); ++k)
        for (size_t j = 0; j < want.cols.size(); ++j)
          got.set_bits(int64_t(k * want.cols.size() + j), rows.bits(int64_t(k) * c.dim + want.cols[j]));
    }
    Comparison cmp = compare_accuracy(scale_output_name(c, o), got, want.want);
    relabel(cmp, want.labels, all_cols ? nullptr : &want.cols, c.dim);
    judge(cmp);
  }
  if (!v.passed)
    v.message = head(impl, c) + msg.str() + " (float64 oracle on a sample: " + sample_scope(c, smp, ref) + ")";
  return v;
}

}  // namespace

namespace checks {

Verdict scale_accuracy(const Implementation& impl, const ScaleCase& c, const ScaleCheckOptions& o) {
  const bool exact = c.spec.values == ScaleValues::exact;
  if (exact && !op_oracle(c.op()).exact_at_scale)
    throw std::invalid_argument(std::string("accuracy at scale: ") + c.op().name +
                                "'s outputs are not exact by construction on exact values (its scale cases round)");
  if (exact)
    if (const std::string why = exact_values_problem(c); !why.empty())
      throw std::invalid_argument("accuracy at scale: " + why);
  ScaleSession s(impl, c, 1, o.memory_bytes);
  s.time_calls(o.times);
  const Status st = s.run(0, nullptr);
  if (!st.ok()) return failed_run(impl, s, c, "", st);
  return exact ? accuracy_exact(impl, c, s) : accuracy_sampled(impl, c, s);
}

}  // namespace checks

}  // namespace gatecheck
