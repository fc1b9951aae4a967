// The library ops that ops' plain parts are compared with (OpSchema::plain:
// rmsnorm_modulate's RMSNorm against nn.RMSNorm, as RL-Kernel's operator
// report does), run by the LibTorch this build links. This header does not
// include torch: only its op's unit does (rms_norm: rmsnorm_modulate_torch_eager.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../op_contract.h"

namespace gatecheck {

// One tensor of a library op's call, in host memory: [rows, cols] row-major.
struct PlainTensor {
  const void* data = nullptr;
  int64_t rows = 0, cols = 0;
};

// Why this LibTorch cannot run `library_op`, or "" when it can (rms_norm
// came with PyTorch 2.4).
std::string torch_plain_op_missing(const char* library_op);

// What runs `library_op` here, for a report: "at::rms_norm (LibTorch 2.11.0)".
std::string torch_plain_op_name(const char* library_op);

// Runs `library_op` on device d in dtype t: the tensors are copied there from
// the host, the scalars passed in order, and the result, args[0]'s shape,
// copied back into `out` (host). rms_norm takes (input [rows, dim], weight
// [dim]) and eps. A LibTorch error, a missing op, a device this LibTorch
// cannot use, or arguments of the wrong shape come back as an error naming
// them; nothing is thrown.
Status torch_plain_op(const char* library_op, DType t, Device d, const std::vector<PlainTensor>& args,
                      const std::vector<double>& scalars, void* out);

}  // namespace gatecheck
