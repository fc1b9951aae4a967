#include "kernel_bench.h"

int main(int argc, char** argv) { return gatecheck::run_kernel_bench(argc, argv); }
