// The end of a `pjemu run`: one row per job (job, condition, duration, restarts, accuracy) as a
// table for people (plain, or with its cells painted by the caller), and the same data as JSON
// for `--output json`.
// Thread safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "emulator/common/clock.h"
#include "emulator/common/status.h"

namespace pjemu::cli {

struct JobSummary {
  std::string kind = "pytorchjob";  // the job's kind, lower case ("pytorchtrainingjob")
  std::string ns;
  std::string name;
  // The job's state (api::WorkloadState): Succeeded, Failed, or how far it got when the run
  // timed out; a PyTorchTrainingJob's phase.
  std::string condition;
  bool succeeded = false;
  std::string message;    // that condition's message
  Duration duration{};
  std::int64_t restarts = 0;
  std::optional<double> accuracy;   // test accuracy from the trainer's metrics
  std::optional<double> loss;       // last training loss
  Json conditions = Json::array();  // the final status.conditions
};

// Decorates one cell's text (row index into the rows, header = 0; column index), e.g. with a
// terminal colour; the columns are padded from the plain text's width.
using CellPainter =
    std::function<std::string(std::size_t row, std::size_t column, const std::string& text)>;

// JOB  CONDITION  DURATION  RESTARTS  ACCURACY, columns padded like kubectl's tables.
// paint_condition, when set, decorates the CONDITION cell of each job that has a condition.
std::string RenderSummaryTable(
    const std::vector<JobSummary>& jobs,
    const std::function<std::string(const std::string& condition)>& paint_condition = nullptr);
// {"jobs": [{"namespace", "name", "condition", "message", "durationSeconds", "restarts",
//   "accuracy", "loss", "conditions"}], "exitCode": N}
Json SummaryJson(const std::vector<JobSummary>& jobs, int exit_code);
// Pads each column to its widest cell plus 3 spaces (kubectl's printer); rows[0] = header.
// paint, when set, decorates each cell after its width was taken.
std::string FormatColumns(const std::vector<std::vector<std::string>>& rows,
                          const CellPainter& paint = nullptr);

}  // namespace pjemu::cli
