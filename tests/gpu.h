// GPU tests skip cleanly, and say why, on a machine without a CUDA device.
#pragma once

#include <gtest/gtest.h>

#include "harness/impls/implementation.h"

#define GATECHECK_REQUIRE_GPU()                                            \
  do {                                                                     \
    if (!::gatecheck::cuda_available()) GTEST_SKIP() << "no CUDA device"; \
  } while (0)
