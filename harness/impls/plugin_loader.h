// Loads an external implementation through the plugin C ABI (dlopen).
#pragma once

#include <string>

#include "implementation.h"

namespace gatecheck {

// Opens PATH and finds its implementation of op: gatecheck_plugin_v2(op)
// where the library exports it (kernels/gatecheck_plugin_v2.h), else, for
// gate_residual, gatecheck_plugin_v1. Checks what it returns: the ABI
// version, a name, the op, the device, and all three functions. Throws
// std::runtime_error naming the path and what is wrong. The plugin claims the
// default property set.
Implementation load_plugin(const std::string& path, Device device, const OpSchema& op);

}  // namespace gatecheck
