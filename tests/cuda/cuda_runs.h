// Runs a RawCase through the host twin and through the CUDA kernels (raw API,
// optionally on misaligned pointers and an explicit stream) and compares every
// output bit for bit.
#pragma once

#include <string>
#include <vector>

#include "cuda_case.h"
#include "kernels/gate_residual.h"

namespace gatecheck {
namespace testing_cuda {

struct RawOutputs {
  Status fwd, bwd;
  std::vector<uint32_t> out, grad_res, grad_gate, grad_y;  // element bits
};

struct CudaPlacement {
  // Bytes past a 256-aligned base for res, gate, y, out, grad_out, grad_res, grad_gate, grad_y.
  size_t offset[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  bool own_stream = false;  // an explicit cudaStream_t instead of the default stream, made and released per run
  void* stream = nullptr;   // or the caller's stream (kept after the run)
  uint8_t poison = 0xa5;    // byte pattern the outputs start with
  // Graph mode (needs own_stream or stream): with warm_up, one plain forward and
  // backward first, as a caller's first step (it sizes the stream's workspace);
  // then both calls captured into a CUDA graph in global capture mode, where a
  // host synchronisation or a synchronous allocation fails the capture, and the
  // graph launched `replays` times, the outputs poisoned before each launch.
  // The outputs are the last launch's.
  bool capture_graph = false;
  bool warm_up = true;
  int replays = 2;
  // The backward without grad_res (gate_residual_bwd_cuda_strided_no_grad_res,
  // the LibTorch op's entry): grad_res keeps its poison.
  bool no_grad_res = false;
};

RawOutputs run_host(const RawCase& c);
RawOutputs run_cuda(const RawCase& c, const CudaPlacement& where);

// Empty when all four outputs match bit for bit; else one line per differing tensor.
std::string compare_outputs(const RawCase& c, const RawOutputs& cuda, const RawOutputs& host);

// Packs element bits into storage bytes of the case's dtype, and back.
std::vector<uint8_t> to_storage(DType t, const std::vector<uint32_t>& bits);
std::vector<uint32_t> from_storage(DType t, const std::vector<uint8_t>& bytes);

}  // namespace testing_cuda
}  // namespace gatecheck
