// TrainingProgress: what `pjemu run` knows about a job's training, read from the trainer's
// JSON-lines metrics file (<dir>/metrics-rank0.jsonl: "step" and "epoch" records, schema in
// trainer/README.md) and from the reference log lines it streams ("Train Epoch: 1 [640/60000
// (1%)]\tloss=2.2965"). Rendered as the epoch progress bar of the live view.
// Thread safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "emulator/common/status.h"

namespace pjemu::cli {

struct TrainingProgress {
  std::int64_t epoch = 0;           // the epoch being trained (1-based), 0 before the first step
  std::int64_t epochs = 0;          // --epochs of the master's command line, 0 if unknown
  double epoch_fraction = 0;        // 0..1 within the current epoch (from the log lines)
  std::optional<double> loss;       // the last logged training loss
  std::optional<double> accuracy;   // the last epoch's test accuracy (whole test set)
  std::optional<double> test_loss;  // the last epoch's mean test loss
  std::int64_t steps = 0;           // optimizer steps so far
  bool metrics_seen = false;        // a metrics record arrived (it wins over the log lines)
};

// Folds one metrics record into p; false when the line is not a record this understands.
bool ApplyMetricsLine(std::string_view line, TrainingProgress* p);
// Folds a "Train Epoch: E [a/b (p%)]\tloss=X" log line into p, and an "accuracy=X" line when
// no metrics file gave the accuracy; false for other lines.
bool ApplyLogLine(std::string_view line, TrainingProgress* p);
// --epochs from a container's command + args (`--epochs=3` or `--epochs 3`); the reference
// default 1 when the trainer flag is absent.
std::int64_t EpochsFromArgs(const Json& container);
// "epoch 1/1 [##########..........]  52%  loss 0.7412" (width = bar cells); "" before any data.
std::string RenderProgress(const TrainingProgress& p, int width = 30);

}  // namespace pjemu::cli
