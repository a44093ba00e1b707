// The end of a `pjemu run`: one row per job (job, condition, duration, restarts, accuracy) as a
// plain table for people, and the same data as JSON for `--output json`.
// Thread safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "emulator/common/clock.h"
#include "emulator/common/status.h"

namespace pjemu::cli {

struct JobSummary {
  std::string ns;
  std::string name;
  std::string condition;  // Succeeded, Failed, or the last condition when the run timed out
  std::string message;    // that condition's message
  Duration duration{};
  std::int64_t restarts = 0;
  std::optional<double> accuracy;  // test accuracy from the trainer's metrics
  std::optional<double> loss;      // last training loss
  Json conditions = Json::array(); // the final status.conditions
};

// JOB  CONDITION  DURATION  RESTARTS  ACCURACY, columns padded like kubectl's tables.
std::string RenderSummaryTable(const std::vector<JobSummary>& jobs);
// {"jobs": [{"namespace", "name", "condition", "message", "durationSeconds", "restarts",
//   "accuracy", "loss", "conditions"}], "exitCode": N}
Json SummaryJson(const std::vector<JobSummary>& jobs, int exit_code);
// Pads each column to its widest cell plus 3 spaces (kubectl's printer); rows[0] = header.
std::string FormatColumns(const std::vector<std::vector<std::string>>& rows);

}  // namespace pjemu::cli
