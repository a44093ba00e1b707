// Checkpoints of a training run: flat parameters, SGD momentum buffers and the position
// (epoch, next batch, global step), plus the settings the position depends on (world size,
// batch size). Written atomically (temp file + rename) by rank 0; read by rank 0 on start and
// broadcast to the others by TrainLoop. Thread safety: free functions; callers serialise.
#pragma once

#include <torch/types.h>

#include <optional>
#include <string>

#include "trainer/status.h"

namespace pjemu::trainer {

struct Checkpoint {
  torch::Tensor params;     // flat float32, all parameters in registration order
  torch::Tensor momentum;   // flat float32, same layout; undefined before the first step
  int64_t epoch = 1;        // the epoch to continue (1-based)
  int64_t next_batch = 0;   // the first batch of that epoch not yet trained
  int64_t global_step = 0;  // optimizer steps taken so far
  int64_t world_size = 1;
  int64_t batch_size = 64;
};

// "<dir>/checkpoint.pt".
std::string CheckpointPath(const std::string& dir);

// Writes "<dir>/checkpoint.pt.tmp", then renames it over "<dir>/checkpoint.pt" (creates dir).
Status SaveCheckpoint(const std::string& dir, const Checkpoint& c);

// The checkpoint in dir, std::nullopt when there is none, kInternal when it is unreadable.
Result<std::optional<Checkpoint>> LoadCheckpoint(const std::string& dir);

}  // namespace pjemu::trainer
