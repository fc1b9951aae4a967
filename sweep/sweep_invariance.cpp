// The seed report's batch-invariance fields (PRIOR_ART.md), bit for bit on
// the implementation's device: all_rows, params_repeatable,
// full_vs_sub_batches and batch_size_sweep; and segment_invariance, which
// the prior art does not check.
#include <algorithm>
#include <array>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "../case/plan_movement.h"
#include "../case/prng.h"
#include "../properties/catalog/property_roles.h"
#include "../properties/checks/properties.h"
#include "sweep_detail.h"

namespace gatecheck::sweep_detail {

namespace {

// The op's row-wise outputs (their positions), which the row checks compare:
// forward ones (the prior art's "fwd") and gradients ("rowgrad").
std::vector<int> row_outputs(const Case& c) { return c.op->outputs_of_kind(OutputKind::rowwise); }

// Pointers to the row-wise outputs of one place, in row_outputs' order.
using Rows = std::vector<const void*>;

// One row compared in each row output: the first differing column of each,
// or -1 where that output's row is identical.
struct RowDiff {
  const Case* c = nullptr;
  std::vector<int64_t> col;
  bool in_pass(Pass p) const {
    const auto outs = row_outputs(*c);
    for (size_t k = 0; k < col.size(); ++k)
      if (col[k] >= 0 && c->op->outputs[size_t(outs[k])].pass == p) return true;
    return false;
  }
  bool fwd() const { return in_pass(Pass::forward); }
  bool rowgrad() const { return in_pass(Pass::backward); }
  bool differs() const { return fwd() || rowgrad(); }
  int first() const {
    for (size_t k = 0; k < col.size(); ++k)
      if (col[k] >= 0) return int(k);
    return 0;
  }
  const char* output(int k) const { return c->op->outputs[size_t(row_outputs(*c)[size_t(k)])].name; }
  // Does the difference break a claim of row_invariance (claimed per output)?
  bool claimed(const Subject& s, DType t) const {
    for (size_t k = 0; k < col.size(); ++k)
      if (col[k] >= 0 && s.contract.claims_for("row_invariance", output(int(k)), t)) return true;
    return false;
  }
};

// Rows [b0, b0 + n) of `a` against rows [r0, r0 + n) of `ref`, on the device.
std::vector<RowDiff> diff_rows(const BatchRunner& r, const Rows& a, int64_t b0, const Rows& ref, int64_t r0,
                               int64_t n) {
  std::vector<RowDiff> d(static_cast<size_t>(n), RowDiff{&r.cas(), std::vector<int64_t>(a.size(), -1)});
  const size_t rb = r.row_bytes(), es = size_t(dtype_size(r.cas().dtype));
  for (size_t k = 0; k < a.size(); ++k) {
    const auto first = first_differing_bytes(r.impl().device, static_cast<const char*>(a[k]) + size_t(b0) * rb,
                                             static_cast<const char*>(ref[k]) + size_t(r0) * rb, n, rb);
    for (int64_t i = 0; i < n; ++i)
      if (first[size_t(i)] >= 0) d[size_t(i)].col[k] = first[size_t(i)] / int64_t(es);
  }
  return d;
}

void note(Tally* t, bool claimed) {
  ++t->failed;
  (claimed ? t->claimed_failed : t->unclaimed_failed) = true;
}

// row_invariance's vacuity guard wants some compared row to move: a plan
// whose only batch keeps its rows in place (row 0 alone, the first
// sub-batch) also gets the first two rows swapped.
BatchPlan moving(const Case& c, BatchPlan p) {
  if (c.rows >= 2 && !row_movement(c, p).ok()) p.batches.push_back({1, 0});
  return p;
}

// A failed row comparison: batch row `b` of `a` against row `rr` of `ref`,
// for case row `row` at offset `position` of a batch of `batch_rows` rows.
SweepFailure row_failure(const char* check, const BatchRunner& r, const Rows& a, int64_t b, const Rows& ref,
                         int64_t rr, const RowDiff& d, uint64_t seed, int64_t batch_rows, int64_t position,
                         int64_t row, const std::string& against, bool claimed, BatchPlan plan) {
  SweepFailure f;
  f.check = check;
  f.property = invariance_property(OutputKind::rowwise).name;
  f.claimed = claimed;
  f.seed = seed;
  f.full_rows = r.cas().rows;
  f.batch_rows = batch_rows;
  f.position = position;
  f.row = row;
  const int k = d.first();
  f.output = d.output(k);
  f.at_row = row;
  f.at_col = d.col[size_t(k)];
  f.bits = r.bits_at(a[size_t(k)], b, f.at_col);
  f.want_bits = r.bits_at(ref[size_t(k)], rr, f.at_col);
  f.detail = "row " + std::to_string(row) + " at offset " + std::to_string(position) + " of a batch of " +
             std::to_string(batch_rows) + " rows: " + f.output + "[" + std::to_string(row) + ", " +
             std::to_string(f.at_col) + "] bits " + hex_bits(f.bits) + " vs " + hex_bits(f.want_bits) + " " + against;
  f.plan = moving(r.cas(), std::move(plan));
  return f;
}

Rows full_rows(const BatchRunner& r) {
  Rows v;
  for (int k : row_outputs(r.cas())) v.push_back(r.full(k));
  return v;
}
Rows batch_rows(const BatchRunner& r) {
  Rows v;
  for (int k : row_outputs(r.cas())) v.push_back(r.batch(k));
  return v;
}

void must(const Status& st, const std::string& what) {
  if (!st.ok()) throw std::runtime_error(what + ": " + st.message);
}

}  // namespace

bool FailureSink::count(const std::string& check) {
  const int64_t n = ++r_->failed_by_check[check];
  return keep_ == 0 || n <= int64_t(keep_);
}

void all_rows(BatchRunner& r, const Subject& s, uint64_t seed, InvarianceResult* out, FailureSink* sink,
              const std::function<bool()>& stop) {
  const Case& c = r.cas();
  const Rows full = full_rows(r), batch = batch_rows(r);
  AllRowsCount& count = out->all_rows[c.rows];
  for (int64_t i = 0; i < c.rows; ++i) {
    if (stop && stop()) return;
    must(r.run_rows({i}), "row " + std::to_string(i) + " alone");
    const RowDiff d = diff_rows(r, batch, 0, full, i, 1)[0];
    ++count.rows;
    ++out->all_rows_tally.compared;
    count.fwd_differ += d.fwd();
    count.rowgrad_differ += d.rowgrad();
    if (!d.differs()) continue;
    const bool claimed = d.claimed(s, c.dtype);
    note(&out->all_rows_tally, claimed);
    if (sink->count("all_rows"))
      sink->keep(row_failure("all_rows", r, batch, 0, full, i, d, seed, 1, 0, i, "in the full batch", claimed,
                             BatchPlan{"singletons", {{i}}, 0}));
  }
  // params_repeatable: the full batch again, every parameter gradient (the
  // outputs summed over rows) bit for bit.
  const Device dev = r.impl().device;
  std::vector<int> params;
  for (size_t k = 0; k < c.op->outputs.size(); ++k)
    if (c.op->outputs[k].kind != OutputKind::rowwise) params.push_back(int(k));
  std::vector<DeviceBytes> first;
  auto rows_of = [&](int k) { return role_rows(c.op->outputs[size_t(k)].role, c.rows, c.gates); };
  for (int k : params) {
    first.emplace_back(dev, size_t(rows_of(k)) * r.row_bytes());
    copy_on_device(dev, first.back().get(), r.full(k), first.back().size());
  }
  must(r.run_full(), "the full batch again");
  ++out->repeat_tally.compared;
  for (size_t pi = 0; pi < params.size(); ++pi) {
    const int out_k = params[pi];
    const char* name = c.op->outputs[size_t(out_k)].name;
    const auto diff = first_differing_bytes(dev, r.full(out_k), first[pi].get(), rows_of(out_k), r.row_bytes());
    bool differed = false;
    for (int64_t k = 0; k < rows_of(out_k); ++k) {
      if (diff[size_t(k)] < 0) continue;
      differed = true;
      out->params_repeatable = false;
      const bool claimed = s.contract.claims_for("repeatable", name, c.dtype);
      note(&out->repeat_tally, claimed);
      if (sink->count("params_repeatable")) {
        SweepFailure f;
        f.check = "params_repeatable";
        f.property = repeat_property().name;
        f.claimed = claimed;
        f.seed = seed;
        f.full_rows = c.rows;
        f.output = name;
        f.at_row = k;
        f.at_col = diff[size_t(k)] / int64_t(dtype_size(c.dtype));
        f.bits = r.bits_at(r.full(out_k), k, f.at_col);
        f.want_bits = r.bits_at(first[pi].get(), k, f.at_col);
        f.detail = std::string(name) + "[" + std::to_string(k) + ", " + std::to_string(f.at_col) + "] bits " +
                   hex_bits(f.bits) + " in the second run of the whole batch vs " + hex_bits(f.want_bits) +
                   " in the first";
        f.plan = BatchPlan{"repeat", {}, 3};  // the replay runs it 4 more times
        sink->keep(std::move(f));
      }
      break;  // one rerun that differs is one failed comparison
    }
    if (differed) break;
  }
}

void full_vs_sub(BatchRunner& r, const Subject& s, const SweepGrid& g, uint64_t seed, InvarianceResult* out,
                 FailureSink* sink, const std::function<bool()>& stop) {
  const Case& c = r.cas();
  const Rows full = full_rows(r), batch = batch_rows(r);
  for (int64_t size : g.sub_batch_sizes) {
    for (const RowRange& sb : sub_batches(c.rows, size)) {
      if (stop && stop()) return;
      std::vector<int64_t> rows(static_cast<size_t>(sb.rows));
      std::iota(rows.begin(), rows.end(), sb.start);
      must(r.run_rows(rows), "the sub-batch of rows " + std::to_string(sb.start) + ".." +
                                 std::to_string(sb.start + sb.rows - 1));
      ++out->sub_batches;
      ++out->sub_tally.compared;
      const auto d = diff_rows(r, batch, 0, full, sb.start, sb.rows);
      bool fwd = false, rowgrad = false, claimed = false;
      int64_t first = -1;
      for (int64_t i = 0; i < sb.rows; ++i) {
        const RowDiff& e = d[size_t(i)];
        fwd = fwd || e.fwd();
        rowgrad = rowgrad || e.rowgrad();
        claimed = claimed || e.claimed(s, c.dtype);
        if (first < 0 && e.differs()) first = i;
      }
      out->sub_fwd_differ += fwd;
      out->sub_rowgrad_differ += rowgrad;
      if (first < 0) continue;
      note(&out->sub_tally, claimed);
      if (sink->count("full_vs_sub_batches"))
        sink->keep(row_failure("full_vs_sub_batches", r, batch, first, full, sb.start + first, d[size_t(first)], seed,
                               sb.rows, first, sb.start + first, "in the full batch of " + std::to_string(c.rows),
                               claimed, BatchPlan{"prior_art", {rows}, 0}));
    }
  }
}

void batch_size_sweep(BatchRunner& r, const Subject& s, uint64_t seed, InvarianceResult* out, FailureSink* sink,
                      const std::function<bool()>& stop) {
  const Case& c = r.cas();
  const int64_t n = c.rows;
  const Rows batch = batch_rows(r);
  const auto probes = probe_rows(n);
  // Each probe alone first (its row of each output kept).
  std::vector<std::vector<DeviceBytes>> alone;
  for (int64_t p : probes) {
    must(r.run_rows({p}), "probe row " + std::to_string(p) + " alone");
    alone.emplace_back();
    for (const void* b : batch) alone.back().push_back(r.keep(b, 0, 1));
  }
  Prng gen(seed);
  auto compare = [&](const std::vector<int64_t>& rows, int64_t pos, size_t probe) {
    if (stop && stop()) return false;
    const int64_t row = probes[probe];
    must(r.run_rows(rows), "probe row " + std::to_string(row) + " in a batch of " + std::to_string(rows.size()));
    ++out->comparisons;
    ++out->sweep_tally.compared;
    Rows ref;
    for (const DeviceBytes& b : alone[probe]) ref.push_back(b.get());
    const RowDiff d = diff_rows(r, batch, pos, ref, 0, 1)[0];
    if (!d.differs()) return true;
    ++out->sweep_differ;
    const bool claimed = d.claimed(s, c.dtype);
    note(&out->sweep_tally, claimed);
    const bool listed = out->sweep_first.size() < 8;  // the prior art's first_failures
    const bool kept = sink->count("batch_size_sweep");
    if (!listed && !kept) return true;
    SweepFailure f = row_failure("batch_size_sweep", r, batch, pos, ref, 0, d, seed, int64_t(rows.size()), pos, row,
                                 "alone", claimed, BatchPlan{"probe", {{row}, rows}, 0});
    if (listed) out->sweep_first.push_back(f);
    if (kept) sink->keep(std::move(f));
    return true;
  };
  for (int64_t m : sweep_batch_sizes(n)) {
    for (size_t p = 0; p < probes.size(); ++p) {
      // A random batch of other rows: a fresh permutation for each size and probe.
      std::vector<int64_t> perm(static_cast<size_t>(n));
      std::iota(perm.begin(), perm.end(), 0);
      for (int64_t i = n - 1; i > 0; --i) std::swap(perm[size_t(i)], perm[size_t(gen.below(i + 1))]);
      std::vector<int64_t> others;
      for (int64_t x : perm)
        if (x != probes[p] && int64_t(others.size()) < m - 1) others.push_back(x);
      for (int64_t pos : probe_positions(m)) {
        std::vector<int64_t> rows(others.begin(), others.begin() + pos);
        rows.push_back(probes[p]);
        rows.insert(rows.end(), others.begin() + pos, others.end());
        if (!compare(rows, pos, p)) return;
      }
    }
  }
  std::vector<int64_t> reversed(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) reversed[size_t(i)] = n - 1 - i;
  for (size_t p = 0; p < probes.size(); ++p)
    if (!compare(reversed, n - 1 - probes[p], p)) return;
}

void segments(const Case& c, const Subject& s, uint64_t seed, InvarianceResult* out, FailureSink* sink) {
  BatchPlan plan{"gate_groups", {}, 0};
  const auto by_gate = rows_by_gate(c);
  std::vector<int64_t> halves[2];
  int used = 0;
  for (const auto& rows : by_gate) {
    if (rows.empty()) continue;
    plan.batches.push_back(rows);
    auto& h = halves[used++ % 2];
    h.insert(h.end(), rows.begin(), rows.end());
  }
  for (auto& h : halves)
    if (!h.empty() && int64_t(h.size()) < c.rows) {
      std::sort(h.begin(), h.end());
      plan.batches.push_back(h);
    }
  Case k = c;
  k.plan = plan;
  const Verdict v = check_property("segment_invariance", s, k);
  ++out->segment_cases;
  out->segments.compared += v.compared;
  if (v.passed) return;
  const bool claimed = breaks_claim(v, s.contract, c.dtype);
  note(&out->segments, claimed);
  const char* segments = invariance_property(OutputKind::segment_sum).name;
  if (!sink->count(segments)) return;
  SweepFailure f = plan_failure(segments, v, claimed, seed, c.rows, plan);
  sink->keep(std::move(f));
}

SweepFailure plan_failure(const char* property, const Verdict& v, bool claimed, uint64_t seed, int64_t full_rows,
                          const BatchPlan& plan) {
  SweepFailure f;
  f.check = property;
  f.property = property;
  f.claimed = claimed;
  f.seed = seed;
  f.full_rows = full_rows;
  f.detail = v.message;
  f.output = v.failed_outputs.empty() ? std::string() : v.failed_outputs.front();
  if (!v.comparisons.empty() && !v.comparisons.front().first.empty()) {
    const Mismatch& m = v.comparisons.front().first.front();
    f.at_row = m.row;
    f.at_col = m.col;
    f.bits = m.got_bits;
    f.want_bits = m.want_bits;
  }
  f.plan = plan;
  return f;
}

}  // namespace gatecheck::sweep_detail
