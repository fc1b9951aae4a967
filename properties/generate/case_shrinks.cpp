// Case-level shrinks: simpler variants of a case, used by RapidCheck on top
// of the spec's own shrinks (generators.h: simpler_cases).
#include <algorithm>
#include <cmath>

#include "../../case/gen_detail.h"
#include "generators.h"

namespace gatecheck {

using gen_detail::iota_rows;

namespace {

// Rows [a, b) of c, with the plan restricted and renumbered.
Case keep_rows(const Case& c, int64_t a, int64_t b) {
  Case s = sub_case(c, iota_rows(a, b));
  if (c.plan) {
    BatchPlan p = *c.plan;
    p.batches.clear();
    for (const auto& batch : c.plan->batches) {
      std::vector<int64_t> nb;
      for (int64_t r : batch)
        if (r >= a && r < b) nb.push_back(r - a);
      if (!nb.empty()) p.batches.push_back(nb);
    }
    s.plan = p;
  }
  return s;
}

// Columns [0, d) of c.
Case keep_cols(const Case& c, int64_t d) {
  Case s = make_case(*c.op, c.dtype, c.rows, d, c.gates);
  s.index = c.index;
  s.scalars = c.scalars;
  s.plan = c.plan;
  s.index_pattern = c.index_pattern;
  s.value_class = c.value_class;
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    const HostTensor& src = c.inputs[k];
    for (int64_t r = 0; r < src.rows; ++r)
      for (int64_t j = 0; j < d; ++j) s.inputs[k].set_bits(r * d + j, src.bits(r * c.dim + j));
  }
  return s;
}

// The order values are simplified in: the factors a reduction sums first,
// then the incoming gradient, the addends, the modulations (for
// gate_residual: y, grad_out, res, gate); within a kind, the op's order.
std::vector<size_t> simplify_order(const OpSchema& op) {
  std::vector<size_t> order;
  for (Fill f : {Fill::factor, Fill::upstream, Fill::addend, Fill::small_factor}) {
    size_t k = 0;
    for (const auto& in : op.inputs) {
      if (in.role == Role::index) continue;
      if (in.fill == f) order.push_back(k);
      ++k;
    }
  }
  return order;
}

// Moves every value of one tensor one step down the ladder
//   any value -> integer in [-8, 8] -> 0 or 1 -> +0
// (how = 2, 1, 0; non-finite values go straight to +0). Each step only
// changes values that are above its rung, so shrinking cannot cycle.
// Returns false if nothing would change.
bool simplify_tensor(HostTensor& t, int how) {
  bool changed = false;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const float v = t.value(i);
    float w = v;
    if (!std::isfinite(v) || how == 0) w = 0.0f;
    else if (how == 1) w = v == 0 ? 0.0f : 1.0f;
    else w = std::round(std::max(-8.0f, std::min(8.0f, v)));
    if (w == 0) w = 0.0f;  // +0 is simpler than -0
    const uint32_t b = float_to_bits_rn(t.dtype, w);
    if (b != t.bits(i)) {
      t.set_bits(i, b);
      changed = true;
    }
  }
  return changed;
}

}  // namespace

std::vector<Case> simpler_cases(const Case& c) {
  std::vector<Case> out;
  if (c.rows > 1) {
    out.push_back(keep_rows(c, 0, c.rows / 2));
    out.push_back(keep_rows(c, c.rows / 2, c.rows));
    if (c.rows <= 16)
      for (int64_t r = 0; r < c.rows; ++r) {
        std::vector<int64_t> keep;
        for (int64_t q = 0; q < c.rows; ++q)
          if (q != r) keep.push_back(q);
        // drop row r: rows after it move up by one
        Case d = sub_case(c, keep);
        if (c.plan) {
          BatchPlan p = *c.plan;
          p.batches.clear();
          for (const auto& b : c.plan->batches) {
            std::vector<int64_t> nb;
            for (int64_t q : b)
              if (q != r) nb.push_back(q > r ? q - 1 : q);
            if (!nb.empty()) p.batches.push_back(nb);
          }
          d.plan = p;
        }
        out.push_back(d);
      }
  }
  if (c.dim > 1) out.push_back(keep_cols(c, c.dim / 2));
  // One column fewer, where half is too few (a wide odd dim halves to 7 and
  // then below a contract's dim>=4; one fewer walks on to 4).
  if (c.dim > 2) out.push_back(keep_cols(c, c.dim - 1));
  if (c.plan && c.plan->batches.size() > 1)
    for (size_t i = 0; i < c.plan->batches.size() && i < 8; ++i) {
      Case s = c;
      s.plan->batches = {c.plan->batches[i]};
      out.push_back(s);
    }
  const std::vector<size_t> order = simplify_order(*c.op);
  for (int how = 0; how < 3; ++how)
    for (size_t k : order) {
      Case s = c;
      if (simplify_tensor(s.inputs[k], how)) out.push_back(std::move(s));
    }
  return out;
}


}  // namespace gatecheck
