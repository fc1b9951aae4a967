// rmsnorm_modulate's host twin: the op in plain C++ on the CPU, through the
// plugin ABI v2, with one fixed order for every reduction (see the .cpp).
#pragma once

#include "../gatecheck_plugin_v2.h"

namespace gatecheck {

const gatecheck_op_plugin* rmsnorm_modulate_host_plugin();

}  // namespace gatecheck
