// The training run of one rank: loads FashionMNIST, builds the reference convnet with the
// reference's seed, broadcasts rank 0's weights (or its checkpoint), trains with flat-buffer
// gradient all-reduce and SGD, tests, and prints the reference's log lines. Flow: main.cc ->
// RunTraining(Options, Comm) -> Status (main maps it to an exit code, see exit_codes.h).
// Thread safety: runs on the calling thread; Comm's watchdog may save a checkpoint on SIGTERM.
#pragma once

#include <cstdio>

#include "trainer/device.h"
#include "trainer/dist_env.h"
#include "trainer/options.h"
#include "trainer/status.h"

namespace pjemu::trainer {

// What a run ended with, besides its Status.
struct RunSummary {
  double accuracy = 0;      // true accuracy over the whole test set (all ranks together)
  double test_loss = 0;     // mean NLL over the whole test set
  int64_t steps = 0;        // optimizer steps in total (including resumed ones)
  bool terminated = false;  // SIGTERM: checkpoint saved, caller exits 143
};

// Runs the epochs on `device`: on CUDA the model, both splits (once, as float) and the flat
// buffers live on the GPU and torch's modules compute (the hand-written kernels are CPU-only);
// collectives then take CUDA tensors. Log lines go to `out` (flushed per line). Returns
// kUnavailable when a peer failed, kNotFound/kInternal for bad data or checkpoints.
Result<RunSummary> RunTraining(const Options& options, const DeviceChoice& device, Comm& comm,
                               std::FILE* out);

}  // namespace pjemu::trainer
