// torch-eager, loaded on first use: the functions of torch_eager.h,
// rmsnorm_modulate_torch_eager.h and torch_plain_op.h as a process calls them. The implementations
// themselves live in libgatecheck_torch_eager.so (torch_eager_entry.cpp and
// the two .cpp files beside it), the only gatecheck code that links LibTorch:
// loading LibTorch costs about 0.4 s of CPU (its relocations and static
// registrations) in every process that links it, and most commands and tests
// never run torch-eager.
#include <dlfcn.h>

#include <mutex>
#include <stdexcept>
#include <string>

#include "rmsnorm_modulate_torch_eager.h"
#include "torch_eager.h"
#include "torch_eager_module.h"
#include "torch_plain_op.h"

namespace gatecheck {
namespace {

std::mutex& lock() {
  static std::mutex m;
  return m;
}
const TorchEagerModule* loaded = nullptr;  // under lock()
int pending_threads = 0;                   // set before the load, applied at it (under lock())

// An installed gatecheck finds the module by name, through its runpath
// (lib/gatecheck); a build tree by the path CMake built it at.
void* open_module(std::string& why) {
  if (void* h = dlopen("libgatecheck_torch_eager.so", RTLD_NOW | RTLD_LOCAL)) return h;
  if (void* h = dlopen(GATECHECK_TORCH_EAGER_MODULE, RTLD_NOW | RTLD_LOCAL)) return h;
  const char* e = dlerror();
  why = e ? e : "unknown error";
  return nullptr;
}

const TorchEagerModule& module() {
  std::lock_guard<std::mutex> g(lock());
  if (loaded) return *loaded;
  std::string why;
  void* h = open_module(why);
  if (!h) throw std::runtime_error("implementation 'torch-eager': cannot load its LibTorch module: " + why);
  auto entry = reinterpret_cast<const TorchEagerModule* (*)()>(dlsym(h, "gatecheck_torch_eager_module"));
  if (!entry) throw std::runtime_error("implementation 'torch-eager': " GATECHECK_TORCH_EAGER_MODULE " exports no entry");
  loaded = entry();
  if (pending_threads) loaded->set_intra_op_threads(pending_threads);
  return *loaded;
}

}  // namespace

const gatecheck_plugin* torch_eager_plugin(Device d) { return module().gate_residual(d); }

const gatecheck_op_plugin* rmsnorm_modulate_torch_eager_plugin(Device d) { return module().rmsnorm_modulate(d); }

std::string libtorch_version() { return module().libtorch_version(); }

// torch_plain_op.h promises no exception: a module that cannot load is the reason.
std::string torch_plain_op_missing(const char* library_op) {
  try {
    return module().plain_op_missing(library_op);
  } catch (const std::exception& e) {
    return e.what();
  }
}

std::string torch_plain_op_name(const char* library_op) {
  try {
    return module().plain_op_name(library_op);
  } catch (const std::exception&) {
    return std::string("at::") + (library_op ? library_op : "?") + " (LibTorch not loaded)";
  }
}

Status torch_plain_op(const char* library_op, DType t, Device d, const std::vector<PlainTensor>& args,
                      const std::vector<double>& scalars, void* out) {
  try {
    return module().plain_op(library_op, t, d, args, scalars, out);
  } catch (const std::exception& e) {
    return Status::error(ErrorKind::implementation, e.what());
  }
}

void torch_eager_set_intra_op_threads(int n) {
  std::lock_guard<std::mutex> g(lock());
  if (loaded)
    loaded->set_intra_op_threads(n);
  else
    pending_threads = n;  // nothing to set until LibTorch is loaded: it starts with this
}

}  // namespace gatecheck
