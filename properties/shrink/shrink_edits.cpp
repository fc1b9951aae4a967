#include "shrink_edits.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace gatecheck {

namespace {

// Copies the rows of `src` whose keep flag is set, in order.
HostTensor keep_rows(const HostTensor& src, const std::vector<bool>& keep) {
  int64_t n = 0;
  for (int64_t r = 0; r < src.rows; ++r) n += keep[size_t(r)];
  HostTensor dst(src.dtype, n, src.cols);
  const size_t row_bytes = size_t(src.cols * dtype_size(src.dtype));
  int64_t o = 0;
  for (int64_t r = 0; r < src.rows; ++r)
    if (keep[size_t(r)]) {
      if (row_bytes) std::memcpy(dst.bytes.data() + size_t(o) * row_bytes, src.bytes.data() + size_t(r) * row_bytes, row_bytes);
      ++o;
    }
  return dst;
}

HostTensor keep_columns(const HostTensor& src, const std::vector<bool>& keep) {
  int64_t n = 0;
  for (int64_t j = 0; j < src.cols; ++j) n += keep[size_t(j)];
  HostTensor dst(src.dtype, src.rows, n);
  for (int64_t r = 0; r < src.rows; ++r) {
    int64_t o = 0;
    for (int64_t j = 0; j < src.cols; ++j)
      if (keep[size_t(j)]) dst.set_bits(r * n + o++, src.bits(r * src.cols + j));
  }
  return dst;
}

std::vector<bool> negate(const std::vector<bool>& v) {
  std::vector<bool> n(v.size());
  for (size_t i = 0; i < v.size(); ++i) n[i] = !v[i];
  return n;
}

// s's inputs of role r, each made from c's by `edit`.
template <class Edit>
void for_inputs_of_role(Case& s, const Case& c, Role r, Edit edit) {
  size_t k = 0;
  for (const auto& in : c.op->inputs) {
    if (in.role == Role::index) continue;
    if (in.role == r) s.inputs[k] = edit(c.inputs[k]);
    ++k;
  }
}

void drop_empty_batches(BatchPlan* p) {
  std::vector<std::vector<int64_t>> kept;
  for (auto& b : p->batches)
    if (!b.empty()) kept.push_back(std::move(b));
  p->batches = std::move(kept);
}

// A plan that had batches and lost them all is no plan.
void settle_plan(Case* c, bool had_batches) {
  if (!c->plan) return;
  drop_empty_batches(&*c->plan);
  if (had_batches && c->plan->batches.empty()) c->plan.reset();
}

}  // namespace

Case without_rows(const Case& c, const std::vector<bool>& drop) {
  if (int64_t(drop.size()) != c.rows) throw std::invalid_argument("without_rows: mask size differs from rows");
  const auto keep = negate(drop);
  Case s = c;
  for_inputs_of_role(s, c, Role::row, [&](const HostTensor& t) { return keep_rows(t, keep); });
  s.index.clear();
  std::vector<int64_t> new_id(size_t(c.rows), -1);
  for (int64_t r = 0; r < c.rows; ++r)
    if (keep[size_t(r)]) {
      new_id[size_t(r)] = int64_t(s.index.size());
      s.index.push_back(c.index[size_t(r)]);
    }
  s.rows = int64_t(s.index.size());
  if (s.plan) {
    const bool had = !s.plan->batches.empty();
    for (auto& b : s.plan->batches) {
      std::vector<int64_t> nb;
      for (int64_t r : b)
        if (r >= 0 && r < c.rows && new_id[size_t(r)] >= 0) nb.push_back(new_id[size_t(r)]);
      b = std::move(nb);
    }
    settle_plan(&s, had);
  }
  return s;
}

Case without_columns(const Case& c, const std::vector<bool>& drop) {
  if (int64_t(drop.size()) != c.dim) throw std::invalid_argument("without_columns: mask size differs from dim");
  const auto keep = negate(drop);
  Case s = c;
  for (size_t k = 0; k < c.inputs.size(); ++k) s.inputs[k] = keep_columns(c.inputs[k], keep);
  s.dim = 0;
  for (bool k : keep) s.dim += k;
  return s;
}

std::vector<bool> unused_gates(const Case& c) {
  std::vector<bool> unused(size_t(c.gates), true);
  for (int64_t k : c.index)
    if (k >= 0 && k < c.gates) unused[size_t(k)] = false;
  return unused;
}

Case without_gates(const Case& c, const std::vector<bool>& drop) {
  if (int64_t(drop.size()) != c.gates) throw std::invalid_argument("without_gates: mask size differs from gates");
  const auto unused = unused_gates(c);
  std::vector<int64_t> new_id(size_t(c.gates), -1);
  int64_t n = 0;
  for (int64_t k = 0; k < c.gates; ++k) {
    if (drop[size_t(k)] && !unused[size_t(k)])
      throw std::invalid_argument("without_gates: gate " + std::to_string(k) + " is still used");
    if (!drop[size_t(k)]) new_id[size_t(k)] = n++;
  }
  Case s = c;
  const auto keep = negate(drop);
  for_inputs_of_role(s, c, Role::table, [&](const HostTensor& t) { return keep_rows(t, keep); });
  s.gates = n;
  for (auto& k : s.index)  // an index outside the table stays outside it
    k = k < 0 ? k : k >= c.gates ? k - c.gates + n : new_id[size_t(k)];
  return s;
}

Case with_gate_merged(const Case& c, int64_t from, int64_t to) {
  Case s = c;
  for (auto& k : s.index)
    if (k == from) k = to;
  std::vector<bool> drop(size_t(c.gates), false);
  drop[size_t(from)] = true;
  return without_gates(s, drop);
}

Case without_plan(const Case& c) {
  Case s = c;
  s.plan.reset();
  return s;
}

Case without_batch(const Case& c, size_t batch) {
  Case s = c;
  s.plan->batches.erase(s.plan->batches.begin() + long(batch));
  settle_plan(&s, true);
  return s;
}

Case with_batches_merged(const Case& c, size_t batch) {
  Case s = c;
  auto& v = s.plan->batches;
  v[batch].insert(v[batch].end(), v[batch + 1].begin(), v[batch + 1].end());
  std::sort(v[batch].begin(), v[batch].end());
  v.erase(v.begin() + long(batch) + 1);
  return s;
}

Case without_batch_entry(const Case& c, size_t batch, size_t entry) {
  Case s = c;
  auto& b = s.plan->batches[batch];
  b.erase(b.begin() + long(entry));
  settle_plan(&s, true);
  return s;
}

Case with_repeats(const Case& c, int repeats) {
  Case s = c;
  s.plan->repeats = repeats;
  return s;
}

int64_t value_rank(DType t, uint32_t bits) {
  const float f = bits_to_float(t, bits);
  if (std::isnan(f)) return 3000000;
  if (std::isinf(f)) return 2000000 + (f < 0);
  if (f == 0) return std::signbit(f) ? 1 : 0;
  if (f == std::trunc(f) && std::fabs(f) <= 1024) return 2 * int64_t(std::fabs(f)) + (f < 0);
  return 1000000;
}

}  // namespace gatecheck
