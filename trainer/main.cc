// pjemu-trainer: the C++ LibTorch port of the reference FashionMNIST DDP script (mnist.py);
// everything it does is RunTrainerCommand (command.h).
#include "trainer/command.h"

int main(int argc, char** argv) { return pjemu::trainer::RunTrainerCommand(argc, argv); }
