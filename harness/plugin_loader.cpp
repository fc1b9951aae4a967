#include "plugin_loader.h"

#include <dlfcn.h>

#include <stdexcept>

#include "plugin_stdout.h"

namespace gatecheck {

Implementation load_plugin(const std::string& path, Device device) {
  auto fail = [&](const std::string& why) {
    throw std::runtime_error("plugin '" + path + "': " + why);
  };
  // Its constructors and gatecheck_plugin_v1() may print (and, where the
  // program allows it, so may anything of it later on: plugin_stdout.h).
  divert_stdout_for_plugins();
  const PluginStdoutToStderr quiet;
  // A bare file name would make dlopen search the library path; keep it a path.
  const std::string open_path = path.find('/') == std::string::npos ? "./" + path : path;
  // RTLD_NODELETE: never unmapped, its destructors run at exit. A plugin may
  // run threads of its own (a pool, a runtime) past our last call: unloading
  // its code under them crashed gatecheck with SIGSEGV after a passing run.
  void* handle = dlopen(open_path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!handle) fail(std::string("cannot be loaded: ") + dlerror());
  std::shared_ptr<void> keep(handle, [](void* h) {
    const PluginStdoutToStderr quiet_unload;
    dlclose(h);
  });
  using entry_fn = const gatecheck_plugin* (*)();
  auto entry = reinterpret_cast<entry_fn>(dlsym(handle, "gatecheck_plugin_v1"));
  if (!entry) fail("does not export gatecheck_plugin_v1 (extern \"C\")");
  const gatecheck_plugin* api = entry();
  if (!api) fail("gatecheck_plugin_v1() returned null");
  if (api->abi_version != GATECHECK_ABI_VERSION)
    fail("abi_version is " + std::to_string(api->abi_version) + ", this gatecheck speaks 1");
  if (!api->name || !*api->name) fail("has no name");
  if (!api->forward || !api->backward || !api->last_error)
    fail("forward, backward and last_error must all be set");
  if (!(api->devices & (1u << int(device))))
    fail(std::string("does not support device ") + device_name(device) + " (devices mask " +
         std::to_string(api->devices) + ")");
  Implementation impl;
  impl.name = "plugin:" + path;
  impl.device = device;
  impl.api = api;
  impl.keepalive = keep;
  return impl;
}

}  // namespace gatecheck
