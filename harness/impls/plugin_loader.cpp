#include "plugin_loader.h"

#include <dlfcn.h>

#include <stdexcept>

#include "plugin_stdout.h"

namespace gatecheck {

Implementation load_plugin(const std::string& path, Device device, const OpSchema& op) {
  auto fail = [&](const std::string& why) {
    throw std::runtime_error("plugin '" + path + "': " + why);
  };
  // Its constructors and its entry point may print (and, where the
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
  Implementation impl;
  impl.op = &op;
  // "" when every entry point is set, else which are null: "backward is null (forward, backward
  // and last_error must all be set)".
  auto null_entries = [](std::initializer_list<std::pair<const char*, bool>> entries) {
    std::string null, all;
    size_t nulls = 0, i = 0;
    for (const auto& [name, set] : entries) {
      all += std::string(i == 0 ? "" : i + 1 == entries.size() ? " and " : ", ") + name;
      ++i;
      if (!set) null += (nulls++ ? ", " : "") + std::string(name);
    }
    return nulls == 0 ? std::string() : null + (nulls == 1 ? " is" : " are") + " null (" + all + " must all be set)";
  };
  auto check_common = [&](uint32_t devices, const char* name, const std::string& null_problem) {
    if (!name || !*name) fail("has no name");
    if (!null_problem.empty()) fail(null_problem);
    if (!(devices & (1u << int(device))))
      fail(std::string("does not support device ") + device_name(device) + " (devices mask " +
           std::to_string(devices) + ")");
  };
  using entry_v2 = const gatecheck_op_plugin* (*)(const char*);
  using entry_v1 = const gatecheck_plugin* (*)();
  if (auto v2 = reinterpret_cast<entry_v2>(dlsym(handle, "gatecheck_plugin_v2"))) {
    const gatecheck_op_plugin* api = v2(op.name);
    if (api) {
      if (api->abi_version != GATECHECK_ABI_VERSION_2)
        fail("gatecheck_plugin_v2's abi_version is " + std::to_string(api->abi_version) + ", expected 2");
      if (!api->op || std::string(api->op) != op.name)
        fail(std::string("gatecheck_plugin_v2(\"") + op.name + "\") returned an implementation of '" +
             (api->op ? api->op : "(no op)") + "'");
      check_common(api->devices, api->name,
                   null_entries({{"forward", api->forward}, {"backward", api->backward}, {"last_error", api->last_error}}));
      impl.api2 = api;
    } else if (&op != &gate_residual_schema() || !dlsym(handle, "gatecheck_plugin_v1")) {
      fail(std::string("gatecheck_plugin_v2(\"") + op.name + "\") returned null: it does not implement " + op.name);
    }
  }
  if (!impl.api2) {
    auto entry = reinterpret_cast<entry_v1>(dlsym(handle, "gatecheck_plugin_v1"));
    if (!entry)
      fail(&op == &gate_residual_schema()
               ? "exports neither gatecheck_plugin_v2 nor gatecheck_plugin_v1 (extern \"C\")"
               : std::string("does not export gatecheck_plugin_v2 (extern \"C\"), which ") + op.name +
                     " needs (gatecheck_plugin_v1 is gate_residual's only)");
    if (&op != &gate_residual_schema())
      fail(std::string("exports gatecheck_plugin_v1 only, which is gate_residual's; ") + op.name +
           " needs gatecheck_plugin_v2 (kernels/gatecheck_plugin_v2.h)");
    const gatecheck_plugin* api = entry();
    if (!api) fail("gatecheck_plugin_v1() returned null");
    if (api->abi_version != GATECHECK_ABI_VERSION)
      fail("abi_version is " + std::to_string(api->abi_version) + ", this gatecheck speaks 1");
    check_common(api->devices, api->name,
                 null_entries({{"forward", api->forward}, {"backward", api->backward}, {"last_error", api->last_error}}));
    impl.api = api;
  }
  // The split exchange (gatecheck_split_exchange.h), optional: declaring one
  // claims split_invariance.
  using entry_exchange = const gatecheck_split_exchange* (*)(const char*);
  if (auto ex = reinterpret_cast<entry_exchange>(dlsym(handle, "gatecheck_split_exchange_v2"))) {
    if (const gatecheck_split_exchange* e = ex(op.name)) {
      if (e->abi_version != GATECHECK_ABI_VERSION_2)
        fail("gatecheck_split_exchange_v2's abi_version is " + std::to_string(e->abi_version) + ", expected 2");
      if (!e->op || std::string(e->op) != op.name)
        fail(std::string("gatecheck_split_exchange_v2(\"") + op.name + "\") returned an exchange of '" +
             (e->op ? e->op : "(no op)") + "'");
      if (const std::string null_problem =
              null_entries({{"state", e->state}, {"state_words", e->state_words}, {"partial", e->partial},
                            {"combine", e->combine}, {"finalize", e->finalize}, {"last_error", e->last_error}});
          !null_problem.empty())
        fail("gatecheck_split_exchange_v2: " + null_problem);
      impl.exchange = e;
      impl.declared_claims = "default, split_invariance";
    }
  }
  impl.name = "plugin:" + path;
  impl.device = device;
  impl.keepalive = keep;
  return impl;
}

}  // namespace gatecheck
