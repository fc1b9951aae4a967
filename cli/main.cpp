// gatecheck: differential fuzzing and property testing of the GPU operators of
// diffusion transformers' AdaLN block (gatecheck ops lists them).
#include "cli.h"

int main(int argc, char** argv) { return gatecheck::gatecheck_main(argc, argv); }
