// The kernel benchmark behind `gatecheck bench` and `gatecheck-bench`:
// our forward and forward+backward against torch eager (LibTorch, CUDA) and a
// device-to-device copy (the ceiling), timed with CUDA events, median of at
// least 50 runs after warm-up, on input sets rotated so that L2 never holds
// them. argv[0] is the program name. Returns 0, 2 on a usage error, 3 when
// there is no CUDA device.
#pragma once

namespace gatecheck {
int run_kernel_bench(int argc, char** argv);
}
