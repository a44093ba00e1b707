// RunTrainerCommand: the whole of pjemu-trainer (the C++ LibTorch port of the reference
// FashionMNIST DDP script, mnist.py) behind a header without Torch, so that main.cc needs none
// of LibTorch's headers to compile. Returns the process's exit code (exit_codes.h); error paths
// and SIGTERM leave with _exit. Call once per process, from main.
#pragma once

namespace pjemu::trainer {

int RunTrainerCommand(int argc, char** argv);

}  // namespace pjemu::trainer
