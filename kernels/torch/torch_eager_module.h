// What the torch-eager module (libgatecheck_torch_eager.so: the translation
// units that link LibTorch) hands its loader (torch_eager_loader.cpp): one
// table, from one exported C symbol. Both sides are built in the same tree
// with the same compiler, so the table may carry C++ types.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../gatecheck_plugin.h"
#include "../gatecheck_plugin_v2.h"
#include "../op_contract.h"
#include "torch_plain_op.h"

namespace gatecheck {

struct TorchEagerModule {
  const gatecheck_plugin* (*gate_residual)(Device);         // nullptr: cannot run on that device
  const gatecheck_op_plugin* (*rmsnorm_modulate)(Device);   // (the same)
  const char* (*libtorch_version)();
  void (*set_intra_op_threads)(int n);  // n <= 0: LibTorch's own count, as it started
  // torch_plain_op.h's three
  std::string (*plain_op_missing)(const char* library_op);
  std::string (*plain_op_name)(const char* library_op);
  Status (*plain_op)(const char* library_op, DType t, Device d, const std::vector<PlainTensor>& args,
                     const std::vector<double>& scalars, void* out);
};

}  // namespace gatecheck

// The module's one export.
extern "C" const gatecheck::TorchEagerModule* gatecheck_torch_eager_module();
