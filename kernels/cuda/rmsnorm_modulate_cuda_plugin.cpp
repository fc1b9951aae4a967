// rmsnorm_modulate's CUDA kernels behind the plugin ABI v2. Each call checks
// what the contract says on the host (check_call), runs the kernels, then
// synchronises its stream: an index found out of range on the device is
// reported by this call, by row and value, with nothing written.
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "../op_call_abi.h"
#include "../plugin_adapter.h"
#include "../rmsnorm_modulate.h"
#include "rmsnorm_modulate_cuda.h"
#include "cuda_error_status.h"

namespace gatecheck {
namespace {

using Abi = PluginAdapter<struct RmsCudaTag>;
int report(const Status& s) { return Abi::report(s); }

// The index error, in check_call's words, from a host copy of the index.
Status index_error(const OpCall& c) {
  std::vector<int64_t> host(size_t(c.p.rows));
  const int at = c.op->index_input();
  cudaMemcpy(host.data(), c.inputs[size_t(at)].data, host.size() * sizeof(int64_t), cudaMemcpyDeviceToHost);
  OpCall h = c;
  h.inputs[size_t(at)].data = host.data();
  return check_call(h, 1u << GATECHECK_CUDA, /*index_on_host=*/true);
}

Status run(const gatecheck_call* raw, Pass pass) {
  const OpSchema& op = rmsnorm_modulate_schema();
  const char* who = pass == Pass::forward ? "rmsnorm_modulate_fwd" : "rmsnorm_modulate_bwd";
  OpCall c;
  Status s = op_call_from_abi(op, pass, raw, &c);
  if (s.ok()) s = check_call(c, 1u << GATECHECK_CUDA, /*index_on_host=*/false);
  if (!s.ok()) return s;
  cudaStream_t stream = static_cast<cudaStream_t>(c.p.stream);
  unsigned long long* bad = nullptr;
  cudaError_t e = cudaMallocAsync(reinterpret_cast<void**>(&bad), sizeof *bad, stream);
  if (e != cudaSuccess) return cuda_error_status(who, "", e);
  s = rmsnorm_modulate_cuda_run(c, bad);
  unsigned long long bad_row = ~0ull;
  e = cudaMemcpyAsync(&bad_row, bad, sizeof bad_row, cudaMemcpyDeviceToHost, stream);
  cudaFreeAsync(bad, stream);
  const cudaError_t sync = cudaStreamSynchronize(stream);
  if (!s.ok()) return s;
  if (e == cudaSuccess) e = sync;
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e != cudaSuccess) return cuda_error_status(who, "", e);
  if (bad_row != ~0ull && c.p.rows > 0) {
    s = index_error(c);
    if (s.ok())  // the device saw what the host copy does not: say so rather than pass
      s = Status::error(ErrorKind::index_out_of_range,
                        std::string(who) + ": index[" + std::to_string(bad_row) + "] is out of range [0, gates)");
    return s;
  }
  return Status::success();
}

int forward_call(const gatecheck_call* c) { return report(run(c, Pass::forward)); }
int backward_call(const gatecheck_call* c) { return report(run(c, Pass::backward)); }

const gatecheck_op_plugin kCuda{2,           "rmsnorm_modulate cuda", "rmsnorm_modulate", 1u << GATECHECK_CUDA,
                                forward_call, backward_call,           Abi::last_error};

}  // namespace

const gatecheck_op_plugin* rmsnorm_modulate_cuda_plugin() { return &kCuda; }

}  // namespace gatecheck
