#include "rmsnorm_bench.h"

int main(int argc, char** argv) { return gatecheck::run_rmsnorm_bench(argc, argv); }
