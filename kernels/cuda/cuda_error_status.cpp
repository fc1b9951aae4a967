#include "cuda_error_status.h"

#include <string>

namespace gatecheck {

Status cuda_error_status(const char* who, const char* what, cudaError_t e) {
  if (e == cudaSuccess) return Status::success();
  return Status::error(ErrorKind::implementation, std::string(who) + ": CUDA error" + what + ": " +
                                                      cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

}  // namespace gatecheck
