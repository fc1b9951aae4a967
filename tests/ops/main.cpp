// gatecheck with the test op scaled_add: the project's command line as it is
// (cli/gatecheck_main), in a program that links the op's files, whose
// registrars add it to the catalogs before main().
#include "cli/cli.h"

int main(int argc, char** argv) { return gatecheck::gatecheck_main(argc, argv); }
