// host-repro for rmsnorm_modulate: the twin's forward and dx; the parameter
// gradients summed reproducibly (binned_sum.h) from the twin's terms.
#include "rmsnorm_modulate_repro_host.h"

#include <cstring>
#include <string>
#include <vector>

#include "../binned_sum.h"
#include "../gate_residual_dtype.h"
#include "../op_call_abi.h"
#include "../plugin_adapter.h"
#include "../rmsnorm_modulate.h"
#include "rmsnorm_modulate_host.h"

namespace gatecheck {

namespace {

using Abi = PluginAdapter<struct RmsReproHostTag>;
int report(const Status& s) { return Abi::report(s); }

const char* const kGradients[3] = {"dweight", "dshift", "dscale"};

// Where element e of gradient t (0 dweight, 1 dshift, 2 dscale) starts in a state, in elements.
int64_t first_element(const gatecheck_problem& p, int t) {
  return t == 0 ? 0 : p.dim + (t - 1) * p.gates * p.dim;
}

// The call's inputs as check_call sees them. The outputs are not this step's
// (the exchange passes them null): each stands in with a non-null address,
// never written, so that only their shapes are checked.
Status check_inputs(const OpCall& bwd, const char* step) {
  OpCall c = bwd;
  static char unused;
  for (auto& o : c.outputs)
    if (!o.data) o.data = &unused;
  Status s = check_call(c, 1u << GATECHECK_CPU, /*index_on_host=*/true);
  if (!s.ok()) s.message = std::string(step) + ": " + s.message;
  return s;
}

template <class T>
void finalize_typed(const OpCall& bwd, const uint64_t* state) {
  for (int t = 0; t < 3; ++t) {
    T* out = static_cast<T*>(bwd.output(kGradients[t]).data);
    const int64_t n = t == 0 ? bwd.p.dim : bwd.p.gates * bwd.p.dim;
    const uint64_t* w = state + first_element(bwd.p, t) * kBinnedWords;
    for (int64_t e = 0; e < n; ++e) out[e] = binned_finish_words<T>(w + e * kBinnedWords);
  }
}

// The twin's forward, unchanged.
int forward_call(const gatecheck_call* c) { return Abi::forward_of(rmsnorm_modulate_host_plugin(), c); }

// The twin's backward (dx, and every check of the arguments); then its
// parameter gradients again, binned (the twin's values are replaced).
int backward_call(const gatecheck_call* raw) {
  if (const int rc = Abi::backward_of(rmsnorm_modulate_host_plugin(), raw)) return rc;
  OpCall c;
  Status s = op_call_from_abi(rmsnorm_modulate_schema(), Pass::backward, raw, &c);
  if (!s.ok()) return report(s);
  std::vector<uint64_t> state(size_t(rmsnorm_modulate_repro_state_words(c.p)), 0);
  s = rmsnorm_modulate_repro_partial(c, state.data());
  if (!s.ok()) return report(s);
  rmsnorm_modulate_repro_finalize(c, state.data());
  return 0;
}

int64_t ex_state_words(const gatecheck_problem* p) { return p ? rmsnorm_modulate_repro_state_words(*p) : 0; }

int ex_partial(const gatecheck_call* raw, uint64_t* state) {
  OpCall c;
  Status s = op_call_from_abi(rmsnorm_modulate_schema(), Pass::backward, raw, &c);
  if (!s.ok()) return report(s);
  if (!state && rmsnorm_modulate_repro_state_words(c.p) > 0)
    return report(Status::error(ErrorKind::null_pointer, "partial: state is null"));
  return report(rmsnorm_modulate_repro_partial(c, state));
}

int ex_combine(const gatecheck_problem* p, const uint64_t* const* states, int32_t n, uint64_t* out) {
  Status s = check_combine_args(p, states, n, out);
  if (s.ok() && (p->gates < 0 || p->dim < 0))
    s = Status::error(ErrorKind::shape_mismatch, "combine: dim and gates must be >= 0 (dim=" + std::to_string(p->dim) +
                                                     ", gates=" + std::to_string(p->gates) + ")");
  if (s.ok()) rmsnorm_modulate_repro_combine(*p, states, n, out);
  return report(s);
}

int ex_finalize(const gatecheck_call* raw, const uint64_t* state) {
  OpCall c;
  Status s = op_call_from_abi(rmsnorm_modulate_schema(), Pass::backward, raw, &c);
  if (!s.ok()) return report(s);
  s = check_problem("finalize", c.p, 1u << GATECHECK_CPU);
  if (!s.ok()) return report(s);
  if (rmsnorm_modulate_repro_state_words(c.p) > 0) {
    if (!state) return report(Status::error(ErrorKind::null_pointer, "finalize: state is null"));
    for (const char* g : kGradients)
      if (!c.output(g).data)
        return report(Status::error(ErrorKind::null_pointer, std::string("finalize: ") + g + " is null"));
  }
  rmsnorm_modulate_repro_finalize(c, state);
  return 0;
}

const gatecheck_op_plugin kPlugin{2,           "rmsnorm_modulate host-repro", "rmsnorm_modulate", 1u << GATECHECK_CPU,
                                  forward_call, backward_call,                 Abi::last_error};

}  // namespace

int64_t rmsnorm_modulate_repro_state_words(const gatecheck_problem& p) {
  return p.gates >= 0 && p.dim > 0 ? (p.dim + 2 * p.gates * p.dim) * kBinnedWords : 0;
}

Status rmsnorm_modulate_repro_partial(const OpCall& bwd, uint64_t* state) {
  Status s = check_inputs(bwd, "partial");
  if (!s.ok()) return s;
  const gatecheck_problem& p = bwd.p;
  const int64_t elems = rmsnorm_modulate_repro_state_words(p) / kBinnedWords;
  if (elems == 0) return Status::success();
  std::vector<BinnedSum> acc(size_t(elems), binned_empty());
  BinnedSum* dw = acc.data();
  BinnedSum* dsh = dw + first_element(p, 1);
  BinnedSum* dsc = dw + first_element(p, 2);
  const int64_t* index = bwd.index();
  const RmsHostTerms terms(bwd);
  for (int64_t r = 0; r < p.rows; ++r) {
    const float rstd = terms.row_rstd(r);
    const int64_t t = index[r] * p.dim;
    for (int64_t j = 0; j < p.dim; ++j) {
      const RmsColumnTerms term = terms.column_terms(r, j, rstd);
      dw[j].add(term.dweight(rstd));
      dsh[t + j].add(term.dshift());
      dsc[t + j].add(term.dscale());
    }
  }
  for (int64_t e = 0; e < elems; ++e) acc[size_t(e)].to_words(state + e * kBinnedWords);
  return Status::success();
}

void rmsnorm_modulate_repro_combine(const gatecheck_problem& p, const uint64_t* const* states, int32_t n,
                                   uint64_t* out) {
  binned_combine_states(rmsnorm_modulate_repro_state_words(p), states, n, out);
}

void rmsnorm_modulate_repro_finalize(const OpCall& bwd, const uint64_t* state) {
  if (rmsnorm_modulate_repro_state_words(bwd.p) == 0) return;
  dispatch_dtype(DType(bwd.p.dtype), [&](auto tag) { finalize_typed<decltype(tag)>(bwd, state); });
}

const gatecheck_op_plugin* rmsnorm_modulate_repro_host_plugin() { return &kPlugin; }

const gatecheck_split_exchange* rmsnorm_modulate_repro_host_exchange() {
  static const gatecheck_split_exchange ex = {GATECHECK_ABI_VERSION_2,
                                              "rmsnorm_modulate",
                                              kRmsnormModulateReproStateText,
                                              ex_state_words,
                                              ex_partial,
                                              ex_combine,
                                              ex_finalize,
                                              Abi::last_error};
  return &ex;
}

}  // namespace gatecheck
