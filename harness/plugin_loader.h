// Loads an external implementation through the plugin C ABI (dlopen).
#pragma once

#include <string>

#include "implementation.h"

namespace gatecheck {

// Opens PATH, finds gatecheck_plugin_v1 and checks what it returns: ABI
// version 1, a name, at least one device, and all three functions. Throws
// std::runtime_error naming the path and what is wrong. The plugin claims the
// default property set.
Implementation load_plugin(const std::string& path, Device device);

}  // namespace gatecheck
