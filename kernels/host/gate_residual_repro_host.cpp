// host-repro: gate_residual with grad_gate summed reproducibly (binned_sum.h).
#include "gate_residual_repro_host.h"

#include <cstring>
#include <string>
#include <vector>

#include "../binned_sum.h"
#include "../gate_residual_dtype.h"
#include "../gate_residual_math.h"
#include "../op_call_abi.h"
#include "../plugin_adapter.h"
#include "gate_residual_host.h"

namespace gatecheck {

namespace {

constexpr uint32_t kHostDevices = 1u << GATECHECK_CPU;

template <class T>
void partial_typed(const gatecheck_problem& p, const T* grad_out, const int64_t* index, const T* y, uint64_t* state) {
  std::vector<BinnedSum> acc(size_t(p.gates * p.dim), binned_empty());
  for (int64_t r = 0; r < p.rows; ++r) {
    const int64_t o = r * p.dim;
    BinnedSum* row = acc.data() + index[r] * p.dim;
    for (int64_t j = 0; j < p.dim; ++j) row[j].add(gate_residual_grad_gate_term(grad_out[o + j], y[o + j]));
  }
  for (size_t e = 0; e < acc.size(); ++e) acc[e].to_words(state + e * kBinnedWords);
}

template <class T>
void finalize_typed(const gatecheck_problem& p, const uint64_t* state, T* grad_gate) {
  const int64_t n = p.gates * p.dim;
  for (int64_t e = 0; e < n; ++e) grad_gate[e] = binned_finish_words<T>(state + e * kBinnedWords);
}

Status check_problem_for_state(const gatecheck_problem& p, const char* who) {
  if (p.gates < 0 || p.dim < 0 || p.rows < 0)
    return Status::error(ErrorKind::shape_mismatch, std::string(who) + ": rows, dim and gates must be >= 0 (rows=" +
                                                   std::to_string(p.rows) + ", dim=" + std::to_string(p.dim) +
                                                   ", gates=" + std::to_string(p.gates) + ")");
  if (p.dtype < 0 || p.dtype > 2)
    return Status::error(ErrorKind::dtype_mismatch, std::string(who) + ": unknown dtype " + std::to_string(p.dtype));
  return Status::success();
}

Status bwd_repro(const gatecheck_problem& p, const void* grad_out, const void* gate, const int64_t* index,
                 const void* y, void* grad_res, void* grad_gate, void* grad_y) {
  // grad_res and grad_y (and every check of the arguments) as "host"; then
  // grad_gate again, binned. (host writes it first: its value is replaced.)
  Status s = gate_residual_bwd_host(p, grad_out, gate, index, y, grad_res, grad_gate, grad_y);
  if (!s.ok()) return s;
  std::vector<uint64_t> state(size_t(gate_residual_repro_state_words(p)), 0);
  s = gate_residual_repro_partial(p, grad_out, index, y, state.data());
  if (!s.ok()) return s;
  gate_residual_repro_finalize(p, state.data(), grad_gate);
  return Status::success();
}

using Abi = PluginAdapter<struct ReproHostTag>;

// host's forward, unchanged.
int abi_forward(const gatecheck_problem* p, const void* res, const void* gate, const int64_t* index, const void* y,
                void* out) {
  return Abi::forward_of(gate_residual_host_plugin(), p, res, gate, index, y, out);
}
int abi_backward(const gatecheck_problem* p, const void* grad_out, const void* gate, const int64_t* index,
                 const void* y, void* grad_res, void* grad_gate, void* grad_y) {
  if (!p) return Abi::null_problem("gate_residual_bwd");
  return Abi::report(bwd_repro(*p, grad_out, gate, index, y, grad_res, grad_gate, grad_y));
}

// The exchange, through ABI v2's call descriptors (this op's tensors by name).
using ExAbi = PluginAdapter<struct ReproExchangeTag>;

int64_t ex_state_words(const gatecheck_problem* p) { return p ? gate_residual_repro_state_words(*p) : 0; }

int ex_partial(const gatecheck_call* c, uint64_t* state) {
  OpCall call;
  Status s = op_call_from_abi(gate_residual_schema(), Pass::backward, c, &call);
  if (!s.ok()) return ExAbi::report(s);
  if (!state) return ExAbi::report(Status::error(ErrorKind::null_pointer, "partial: state is null"));
  auto in = [&](const char* n) { return call.input(n).data; };
  return ExAbi::report(gate_residual_repro_partial(call.p, in("grad_out"), static_cast<const int64_t*>(in("index")),
                                                   in("y"), state));
}

int ex_combine(const gatecheck_problem* p, const uint64_t* const* states, int32_t n, uint64_t* out) {
  const Status s = check_combine_args(p, states, n, out);
  if (s.ok()) gate_residual_repro_combine(*p, states, n, out);
  return ExAbi::report(s);
}

int ex_finalize(const gatecheck_call* c, const uint64_t* state) {
  OpCall call;
  Status s = op_call_from_abi(gate_residual_schema(), Pass::backward, c, &call);
  if (!s.ok()) return ExAbi::report(s);
  void* grad_gate = call.output("grad_gate").data;
  if (!state || !grad_gate)
    return ExAbi::report(Status::error(ErrorKind::null_pointer, "finalize: state or grad_gate is null"));
  s = check_problem_for_state(call.p, "finalize");
  if (!s.ok()) return ExAbi::report(s);
  gate_residual_repro_finalize(call.p, state, grad_gate);
  return 0;
}

}  // namespace

int64_t gate_residual_repro_state_words(const gatecheck_problem& p) {
  return p.gates > 0 && p.dim > 0 ? p.gates * p.dim * kBinnedWords : 0;
}

Status gate_residual_repro_partial(const gatecheck_problem& p, const void* grad_out, const int64_t* index,
                                   const void* y, uint64_t* state) {
  Status s = check_problem_for_state(p, "partial");
  if (!s.ok()) return s;
  if (p.rows > 0 && p.dim > 0 && (!grad_out || !index || !y || !state))
    return Status::error(ErrorKind::null_pointer, "partial: grad_out, index, y or state is null");
  for (int64_t r = 0; r < p.rows; ++r)
    if (index[r] < 0 || index[r] >= p.gates)
      return Status::error(ErrorKind::index_out_of_range, "partial: index[" + std::to_string(r) +
                                                              "]=" + std::to_string(index[r]) + " outside [0, " +
                                                              std::to_string(p.gates) + ")");
  const int64_t words = gate_residual_repro_state_words(p);
  if (words) std::memset(state, 0, size_t(words) * sizeof(uint64_t));
  if (p.dim == 0) return Status::success();
  dispatch_dtype(DType(p.dtype), [&](auto tag) {
    using T = decltype(tag);
    partial_typed<T>(p, static_cast<const T*>(grad_out), index, static_cast<const T*>(y), state);
  });
  return Status::success();
}

void gate_residual_repro_combine(const gatecheck_problem& p, const uint64_t* const* states, int32_t n,
                                 uint64_t* out) {
  binned_combine_states(gate_residual_repro_state_words(p), states, n, out);
}

void gate_residual_repro_finalize(const gatecheck_problem& p, const uint64_t* state, void* grad_gate) {
  dispatch_dtype(DType(p.dtype), [&](auto tag) {
    using T = decltype(tag);
    finalize_typed<T>(p, state, static_cast<T*>(grad_gate));
  });
}

const gatecheck_plugin* gate_residual_repro_host_plugin() {
  static const gatecheck_plugin plugin = {GATECHECK_ABI_VERSION, "host-repro", kHostDevices, abi_forward,
                                          abi_backward, Abi::last_error};
  return &plugin;
}

const gatecheck_split_exchange* gate_residual_repro_host_exchange() {
  static const gatecheck_split_exchange ex = {
      GATECHECK_ABI_VERSION_2, "gate_residual",
      kGateResidualReproStateText,
      ex_state_words, ex_partial, ex_combine, ex_finalize, ExAbi::last_error};
  return &ex;
}

}  // namespace gatecheck
