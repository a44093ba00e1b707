// pjemu: the emulator's one binary. Everything happens in pjemu::cli::Main (cli.cc).
#include "emulator/cli/cli.h"

int main(int argc, char** argv) { return pjemu::cli::Main(argc, argv); }
