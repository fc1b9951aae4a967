// Scaffolding shared by the planted mutants and the correct alternatives:
// each is a struct with static forward/backward functions (raw ABI shape,
// returning a Status); MutantAbi<M> puts it behind the plugin C ABI.
//
// Every mutant starts from the host twin (HostTwin below) and replaces or
// overlays exactly one piece, so the planted bug is the only difference.
#pragma once

#include <string>

#include "../../kernels/gate_residual.h"
#include "../../kernels/gate_residual_dtype.h"
#include "../../kernels/host/gate_residual_host.h"

namespace gatecheck::mutants {

constexpr uint32_t kCpuOnly = 1u << GATECHECK_CPU;

// The correct host twin, which mutants inherit from and override.
struct HostTwin {
  static Status forward(const gatecheck_problem& p, const void* res, const void* gate,
                        const int64_t* index, const void* y, void* out) {
    return gate_residual_fwd_host(p, res, gate, index, y, out);
  }
  static Status backward(const gatecheck_problem& p, const void* grad_out, const void* gate,
                         const int64_t* index, const void* y, void* grad_res, void* grad_gate,
                         void* grad_y) {
    return gate_residual_bwd_host(p, grad_out, gate, index, y, grad_res, grad_gate, grad_y);
  }
};

// M has `static constexpr const char* kName` and static forward/backward.
template <class M>
struct MutantAbi {
  static std::string& error() {
    static thread_local std::string e;
    return e;
  }
  static int to_abi(const Status& s) {
    if (s.ok()) return 0;
    error() = s.message;
    return int(s.kind);
  }
  static int forward(const gatecheck_problem* p, const void* res, const void* gate,
                     const int64_t* index, const void* y, void* out) {
    if (!p) return to_abi(Status::error(ErrorKind::null_pointer, "gate_residual_fwd: problem is null"));
    return to_abi(M::forward(*p, res, gate, index, y, out));
  }
  static int backward(const gatecheck_problem* p, const void* grad_out, const void* gate,
                      const int64_t* index, const void* y, void* grad_res, void* grad_gate,
                      void* grad_y) {
    if (!p) return to_abi(Status::error(ErrorKind::null_pointer, "gate_residual_bwd: problem is null"));
    return to_abi(M::backward(*p, grad_out, gate, index, y, grad_res, grad_gate, grad_y));
  }
  static const char* last_error() { return error().c_str(); }
  static const gatecheck_plugin* plugin() {
    static const gatecheck_plugin api = {GATECHECK_ABI_VERSION, M::kName, kCpuOnly, &forward,
                                         &backward, &last_error};
    return &api;
  }
};

}  // namespace gatecheck::mutants
