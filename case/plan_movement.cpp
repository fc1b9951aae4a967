#include "plan_movement.h"

#include <unordered_map>

namespace gatecheck {

std::string Movement::why_vacuous() const {
  if (compared == 0) return "the plan compared nothing";
  if (!offset_moved) return "no compared row moved to a different offset";
  if (!size_changed) return "no compared row ran in a batch of a different size";
  return "";
}

std::vector<std::vector<int64_t>> rows_by_gate(const Case& c) {
  std::vector<std::vector<int64_t>> g(size_t(c.gates > 0 ? c.gates : 0));
  for (int64_t r = 0; r < c.rows; ++r) {
    const int64_t k = c.index[size_t(r)];
    if (k >= 0 && k < c.gates) g[size_t(k)].push_back(r);
  }
  return g;
}

std::vector<int64_t> whole_segments(const std::vector<std::vector<int64_t>>& by_gate,
                                    const Case& c, const std::vector<int64_t>& batch) {
  // Per gate: the rows of that gate in the order the batch holds them.
  std::unordered_map<int64_t, std::vector<int64_t>> seen;
  for (int64_t r : batch) {
    if (r < 0 || r >= c.rows) continue;
    seen[c.index[size_t(r)]].push_back(r);
  }
  std::vector<int64_t> whole;
  for (const auto& [k, rows] : seen)
    if (k >= 0 && k < int64_t(by_gate.size()) && rows == by_gate[size_t(k)]) whole.push_back(k);
  return whole;
}

Movement row_movement(const Case& c, const BatchPlan& p) {
  Movement m;
  for (const auto& b : p.batches) {
    for (size_t i = 0; i < b.size(); ++i) {
      if (b[i] < 0 || b[i] >= c.rows) continue;
      ++m.compared;
      m.offset_moved = m.offset_moved || int64_t(i) != b[i];
      m.size_changed = m.size_changed || int64_t(b.size()) != c.rows;
    }
  }
  return m;
}

Movement segment_movement(const Case& c, const BatchPlan& p) {
  Movement m;
  const auto by_gate = rows_by_gate(c);
  for (const auto& b : p.batches) {
    std::unordered_map<int64_t, int64_t> pos;  // row -> offset in b
    for (size_t i = 0; i < b.size(); ++i) pos.emplace(b[i], int64_t(i));
    for (int64_t k : whole_segments(by_gate, c, b)) {
      ++m.compared;
      for (int64_t r : by_gate[size_t(k)]) m.offset_moved = m.offset_moved || pos[r] != r;
      m.size_changed = m.size_changed || int64_t(b.size()) != c.rows;
    }
  }
  return m;
}

}  // namespace gatecheck
