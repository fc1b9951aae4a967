// The seed report's accuracy fields (max |err| / max |value| against a
// float64 evaluation), and ours beside them: every element against the
// oracle's rigorous bound, the largest error in ulps, and eager exactness.
#include <cmath>
#include <future>
#include <sstream>
#include <vector>

#include "sweep_detail.h"

#include "../oracles/op_oracles.h"

namespace gatecheck::sweep_detail {

namespace {

// The prior art's relative error and the largest error in ulps at the oracle
// value. NaN (from a NaN output) propagates, so that it cannot hide.
void errors(const HostTensor& got, const std::vector<Expected>& want, DType t, OutputAccuracy* o) {
  double max_err = 0, max_ref = 0, max_ulps = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double v = want[size_t(i)].value, err = std::fabs(double(got.value(i)) - v);
    if (!(err <= max_err)) max_err = err;
    max_ref = std::max(max_ref, std::fabs(v));
    const double u = err / ulp(t, v);
    if (!(u <= max_ulps)) max_ulps = u;
  }
  o->rel_err = max_err / std::max(max_ref, 1e-300);
  o->max_ulps = max_ulps;
}

// A failed comparison of the whole case (no batch plan), at its first mismatch.
SweepFailure failure_at(const char* check, uint64_t seed, const Case& c, const char* output, const Mismatch& m) {
  SweepFailure f;
  f.check = check;
  f.property = check;
  f.seed = seed;
  f.full_rows = c.rows;
  f.output = output;
  f.at_row = m.row;
  f.at_col = m.col;
  f.bits = m.got_bits;
  return f;
}

}  // namespace

void accuracy(const Outputs& got, const Reference& ref, const Outputs& eager, const Subject& s, const Case& c,
              uint64_t seed, AccuracyAt* out, FailureSink* sink) {
  out->rows = c.rows;
  out->dim = c.dim;
  bool acc_ok = true, acc_claimed = false, eager_ok = true, eager_claimed = false;
  std::optional<SweepFailure> acc_fail, eager_fail;
  // The four outputs' comparisons on threads of their own (at 32768 x 5376,
  // 176 M elements each): pure functions of the outputs and the oracle.
  struct Compared {
    Comparison acc, eager;
    OutputAccuracy o;
  };
  // The outputs the eager model pins bit for bit (oracles/op_oracles.h).
  const OpOracle& oracle = op_oracle(*c.op);
  auto pinned = [&](const char* name) {
    for (const auto& e : oracle.eager_outputs)
      if (e == name) return oracle.eager_model != nullptr;
    return false;
  };
  const size_t n_out = c.op->outputs.size();
  out->outputs.assign(n_out, OutputAccuracy{});
  out->output_names.clear();
  for (const auto& o : c.op->outputs) out->output_names.push_back(o.name);
  std::vector<std::future<Compared>> work;
  for (size_t k = 0; k < n_out; ++k)
    work.push_back(std::async(std::launch::async, [&, k] {
      const char* name = c.op->outputs[k].name;
      const HostTensor& g = got.tensors[k];
      Compared r;
      r.acc = compare_accuracy(name, g, ref.outputs[k]);
      errors(g, ref.outputs[k], c.dtype, &r.o);
      if (pinned(name)) r.eager = compare_bitwise(name, g, eager.tensors[k], /*nan_any=*/true);
      return r;
    }));
  for (size_t k = 0; k < n_out; ++k) {
    const char* name = c.op->outputs[k].name;
    OutputAccuracy& o = out->outputs[k];
    const Compared done = work[size_t(k)].get();
    const Comparison& cmp = done.acc;
    o = done.o;
    o.elements = cmp.checked;
    o.outside_bound = cmp.failed;
    o.max_err_over_bound = cmp.max_err_over_bound;
    const bool claimed = s.contract.claims_for("accuracy", name, c.dtype);
    o.verdict = verdict_word(cmp.ok(), claimed);
    if (!cmp.ok()) {
      acc_ok = false;
      acc_claimed = acc_claimed || claimed;
      if (!acc_fail || (claimed && !acc_fail->claimed)) {
        const Mismatch& m = cmp.first.front();
        SweepFailure f = failure_at("accuracy", seed, c, name, m);
        std::ostringstream d;
        d.precision(9);
        d << name << ": " << cmp.failed << " of " << cmp.checked << " elements outside the oracle bound, first ["
          << m.row << ", " << m.col << "] got " << m.got << " (" << hex_bits(m.got_bits) << ") want " << m.want
          << " bound " << m.bound << " (" << m.why << ")";
        f.detail = d.str();
        acc_fail = f;
      }
    }
    if (!pinned(name)) continue;
    const Comparison& eq = done.eager;
    o.eager_differ = eq.failed;
    if (eq.ok()) continue;
    const bool eclaimed = s.contract.claims_for("eager_exact", name, c.dtype);
    eager_ok = false;
    eager_claimed = eager_claimed || eclaimed;
    if (!eager_fail) {
      const Mismatch& m = eq.first.front();
      SweepFailure f = failure_at("eager_exact", seed, c, name, m);
      f.want_bits = m.want_bits;
      f.detail = std::string(name) + ": " + std::to_string(eq.failed) + " of " + std::to_string(eq.checked) +
                 " elements differ from the eager model, first [" + std::to_string(m.row) + ", " +
                 std::to_string(m.col) + "] bits " + hex_bits(m.got_bits) + " vs eager " + hex_bits(m.want_bits);
      eager_fail = f;
    }
  }
  out->verdict = verdict_word(acc_ok, acc_claimed);
  out->eager_verdict = verdict_word(eager_ok, eager_claimed);
  for (auto* f : {&acc_fail, &eager_fail}) {
    if (!*f) continue;
    (*f)->claimed = f == &acc_fail ? acc_claimed : eager_claimed;
    if (sink->count((*f)->check)) sink->keep(**f);
  }
}

}  // namespace gatecheck::sweep_detail
