#include "emulator/cli/summary_table.h"

#include <fmt/format.h>

#include <algorithm>

namespace pjemu::cli {

std::string FormatColumns(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 3, ' ');
    }
    out += line + "\n";
  }
  return out;
}

std::string RenderSummaryTable(const std::vector<JobSummary>& jobs) {
  std::vector<std::vector<std::string>> rows = {
      {"JOB", "CONDITION", "DURATION", "RESTARTS", "ACCURACY"}};
  for (const JobSummary& j : jobs) {
    rows.push_back({j.ns + "/" + j.name, j.condition.empty() ? "-" : j.condition,
                    FormatAge(j.duration), std::to_string(j.restarts),
                    j.accuracy ? fmt::format("{:.4f}", *j.accuracy) : "-"});
  }
  return FormatColumns(rows);
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
