// The torch-eager module's one export: the table its loader reads
// (torch_eager_module.h). Built into libgatecheck_torch_eager.so with the
// two implementations; nothing else of it is visible outside the module.
#include <ATen/Parallel.h>
#include <torch/version.h>

#include "rmsnorm_modulate_torch_eager.h"
#include "torch_eager.h"
#include "torch_eager_module.h"
#include "torch_plain_op.h"

namespace gatecheck {
namespace {

const char* version() { return TORCH_VERSION; }

void set_threads(int n) {
  static const int initial = at::get_num_threads();  // before anything here changed it
  const int want = n > 0 ? n : initial;
  if (want != at::get_num_threads()) at::set_num_threads(want);
}

}  // namespace
}  // namespace gatecheck

extern "C" __attribute__((visibility("default"))) const gatecheck::TorchEagerModule* gatecheck_torch_eager_module() {
  static const gatecheck::TorchEagerModule m = {gatecheck::torch_eager_plugin,
                                                gatecheck::rmsnorm_modulate_torch_eager_plugin,
                                                gatecheck::version, gatecheck::set_threads,
                                                gatecheck::torch_plain_op_missing, gatecheck::torch_plain_op_name,
                                                gatecheck::torch_plain_op};
  return &m;
}
