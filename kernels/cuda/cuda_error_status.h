// A CUDA runtime error as a Status, in one form for the host side of every
// kernel: "<who>: CUDA error<what>: <cudaErrorName>: <its description>", of
// kind implementation; `what` says where, as the caller words it (" in
// launch", " (found at synchronisation)", or "" for nothing). Success for
// cudaSuccess, so a call's result can be passed straight through.
#pragma once

#include <cuda_runtime.h>

#include "../op_contract.h"

namespace gatecheck {

Status cuda_error_status(const char* who, const char* what, cudaError_t e);

}  // namespace gatecheck
