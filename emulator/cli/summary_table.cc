#include "emulator/cli/summary_table.h"

#include <fmt/format.h>

#include <algorithm>

namespace pjemu::cli {

std::string FormatColumns(const std::vector<std::vector<std::string>>& rows,
                          const CellPainter& paint) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const auto& row = rows[r];
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += paint ? paint(r, i, row[i]) : row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 3, ' ');
    }
    out += line + "\n";
  }
  return out;
}

std::string RenderSummaryTable(
    const std::vector<JobSummary>& jobs,
    const std::function<std::string(const std::string& condition)>& paint_condition) {
  std::vector<std::vector<std::string>> rows = {
      {"JOB", "CONDITION", "DURATION", "RESTARTS", "ACCURACY"}};
  for (const JobSummary& j : jobs) {
    rows.push_back({j.ns + "/" + j.name, j.condition.empty() ? "-" : j.condition,
                    FormatAge(j.duration), std::to_string(j.restarts),
                    j.accuracy ? fmt::format("{:.4f}", *j.accuracy) : "-"});
  }
  if (!paint_condition) return FormatColumns(rows);
  return FormatColumns(rows, [&](std::size_t r, std::size_t column, const std::string& text) {
    bool painted = r > 0 && column == 1 && !jobs[r - 1].condition.empty();
    return painted ? paint_condition(text) : text;
  });
}

Json SummaryJson(const std::vector<JobSummary>& jobs, int exit_code) {
  Json out = {{"jobs", Json::array()}, {"exitCode", exit_code}};
  for (const JobSummary& j : jobs) {
    Json row = {{"namespace", j.ns},
                {"name", j.name},
                {"condition", j.condition},
                {"message", j.message},
                {"durationSeconds", std::chrono::duration<double>(j.duration).count()},
                {"restarts", j.restarts},
                {"accuracy", j.accuracy ? Json(*j.accuracy) : Json()},
                {"loss", j.loss ? Json(*j.loss) : Json()},
                {"conditions", j.conditions}};
    out["jobs"].push_back(std::move(row));
  }
  return out;
}

}  // namespace pjemu::cli
