#include "emulator/api/batchjob.h"

#include "emulator/api/json_fields.h"

namespace pjemu::api::batchjob {
namespace {

// The strategy's generateSelector: a selector on the uid, and the four labels on the template
// (the legacy ones kept for older clients, as the API server still writes them).
void GenerateSelector(Json& job) {
  Json& spec = job["spec"];
  const Json& manual = Field(spec, "manualSelector");
  if (manual.is_boolean() && manual.get<bool>()) return;
  const std::string uid = Str(Field(job, "metadata"), "uid");
  const std::string name = Str(Field(job, "metadata"), "name");
  Json& labels = spec["template"]["metadata"]["labels"];
  if (!labels.is_object()) labels = Json::object();
  SetIfAbsent(labels, kControllerUidLabel, uid);
  SetIfAbsent(labels, kJobNameLabel, name);
  SetIfAbsent(labels, kLegacyControllerUidLabel, uid);
  SetIfAbsent(labels, kLegacyJobNameLabel, name);
  if (!spec.contains("selector") || spec["selector"].is_null()) {
    spec["selector"] = {{"matchLabels", {{kControllerUidLabel, uid}}}};
  }
}

}  // namespace

void SetDefaults(Json& job) {
  if (!job.is_object()) return;
  Json& spec = job["spec"];
  if (!spec.is_object()) return;  // validation names the missing spec
  const bool no_completions = !spec.contains("completions") || spec["completions"].is_null();
  const bool no_parallelism = !spec.contains("parallelism") || spec["parallelism"].is_null();
  if (no_completions && no_parallelism) spec["completions"] = 1;
  if (no_parallelism) spec["parallelism"] = 1;
  const bool per_index = spec.contains("backoffLimitPerIndex") && !spec["backoffLimitPerIndex"].is_null();
  SetIfAbsent(spec, "backoffLimit", per_index ? 2147483647 : 6);
  SetIfAbsent(spec, "completionMode", kNonIndexed);
  SetIfAbsent(spec, "suspend", false);
  SetIfAbsent(spec, "manualSelector", false);
  const bool pfp = spec.contains("podFailurePolicy") && !spec["podFailurePolicy"].is_null();
  SetIfAbsent(spec, "podReplacementPolicy", pfp ? "Failed" : "TerminatingOrFailed");
  GenerateSelector(job);
}

const Json* TrueCondition(const Json& job, const std::string& type) {
  return api::TrueCondition(job, type);
}

bool IsFinished(const Json& job) {
  return TrueCondition(job, kComplete) != nullptr || TrueCondition(job, kFailed) != nullptr;
}

std::int64_t IntOr(const Json& obj, const char* key, std::int64_t fallback) {
  return OptInt(obj, key).value_or(fallback);
}

bool IsIndexed(const Json& job) { return Str(Field(job, "spec"), "completionMode") == kIndexed; }

std::string FormatIntervals(const std::vector<std::int64_t>& sorted) {
  std::string out;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(sorted[i]);
    if (j > i) out += (j == i + 1 ? "," : "-") + std::to_string(sorted[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace pjemu::api::batchjob
