// Reads the trainer's JSON-lines metrics file (trainer/README.md "Metrics file") into what the
// console charts: loss per step and accuracy per epoch. Only the file's last `max_bytes` are
// read (a partial first line is skipped), and lines that are not JSON objects are ignored (the
// last one may be half written).
// Thread safety: a pure function of the file's contents.
#pragma once

#include <cstddef>
#include <string>

#include "emulator/common/status.h"

namespace pjemu::ui {

// {"steps": [[step, loss, epoch], ...], "epochs": [{"epoch", "accuracy", "test_loss",
// "samples_per_second", "train_seconds"}, ...], "truncated": bool}. A missing file gives empty
// lists (the trainer has not written yet).
Json ReadMetrics(const std::string& path, std::size_t max_bytes);

}  // namespace pjemu::ui
