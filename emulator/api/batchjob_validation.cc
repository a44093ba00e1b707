// The API server's validation of batch/v1 Jobs (pkg/apis/batch/validation), the part a user
// meets: each error names its field as the real server does.
#include <set>

#include "emulator/api/batchjob.h"
#include "emulator/api/json_fields.h"
#include "emulator/api/object_validation.h"
#include "emulator/api/resources.h"
#include "emulator/api/selector.h"

namespace pjemu::api::batchjob {
namespace {

using Type = FieldError::Type;
using Errors = std::vector<FieldError>;

// An integer of at least `min`; absent is fine (defaulting fills in what must be there).
void CheckMin(const Json& spec, const char* key, std::int64_t min, Errors* errs) {
  const Json& v = Field(spec, key);
  if (v.is_null()) return;
  if (!v.is_number_integer() || v.get<std::int64_t>() < min) {
    errs->push_back({Type::kInvalid, std::string("spec.") + key, ValueText(v),
                     min == 0 ? "must be greater than or equal to 0" : "must be greater than 0"});
  }
}

void CheckTemplate(const Json& spec, Errors* errs) {
  const Json& pod = FieldAt(spec, {"template", "spec"});
  const std::string restart = Str(pod, "restartPolicy");
  if (restart.empty()) {
    errs->push_back({Type::kRequired, "spec.template.spec.restartPolicy", "",
                     "valid values: \"OnFailure\", \"Never\""});
  } else if (restart != "OnFailure" && restart != "Never") {
    errs->push_back(
        NotSupportedError("spec.template.spec.restartPolicy", restart, {"OnFailure", "Never"}));
  }
  const Json& containers = Field(pod, "containers");
  if (!containers.is_array() || containers.empty()) {
    errs->push_back({Type::kRequired, "spec.template.spec.containers", "", ""});
    return;
  }
  for (std::size_t i = 0; i < containers.size(); ++i) {
    const std::string at = "spec.template.spec.containers[" + std::to_string(i) + "]";
    if (Str(containers[i], "name").empty())
      errs->push_back({Type::kRequired, at + ".name", "", ""});
    if (Str(containers[i], "image").empty()) {
      errs->push_back({Type::kRequired, at + ".image", "", ""});
    }
  }
}

// The selector must be present (defaulted when not manual) and match the template's labels.
void CheckSelector(const Json& spec, Errors* errs) {
  const Json& match = FieldAt(spec, {"selector", "matchLabels"});
  if (!Field(spec, "selector").is_object()) {
    errs->push_back({Type::kRequired, "spec.selector", "", ""});
    return;
  }
  const Json& labels = FieldAt(spec, {"template", "metadata", "labels"});
  for (const auto& [k, v] : ObjectOr(match).items()) {
    const Json& have = Field(labels, k.c_str());
    if (!have.is_string() || !v.is_string() || have.get<std::string>() != v.get<std::string>()) {
      errs->push_back({Type::kInvalid, "spec.template.metadata.labels", "",
                       "`selector` does not match template `labels`"});
      return;
    }
  }
}

void CheckMode(const Json& spec, Errors* errs) {
  const std::string mode = Str(spec, "completionMode");
  if (!mode.empty() && mode != kNonIndexed && mode != kIndexed) {
    errs->push_back(NotSupportedError("spec.completionMode", mode, {kNonIndexed, kIndexed}));
  }
  if (mode == kIndexed && !Field(spec, "completions").is_number_integer()) {
    errs->push_back({Type::kRequired, "spec.completions", "", "when completion mode is Indexed"});
  }
  if (Field(spec, "backoffLimitPerIndex").is_number() && mode != kIndexed) {
    errs->push_back(
        {Type::kForbidden, "spec.backoffLimitPerIndex", "", "requires indexed completion mode"});
  }
}

void CheckPodFailurePolicy(const Json& spec, Errors* errs) {
  const Json& rules = FieldAt(spec, {"podFailurePolicy", "rules"});
  if (Field(spec, "podFailurePolicy").is_object() &&
      Str(FieldAt(spec, {"template", "spec"}), "restartPolicy") != "Never") {
    errs->push_back({Type::kInvalid, "spec.template.spec.restartPolicy",
                     GoQuote(Str(FieldAt(spec, {"template", "spec"}), "restartPolicy")),
                     "only \"Never\" is supported when podFailurePolicy is specified"});
  }
  for (std::size_t i = 0; i < ArrayOr(rules).size(); ++i) {
    const Json& rule = rules[i];
    const std::string at = "spec.podFailurePolicy.rules[" + std::to_string(i) + "]";
    const std::string action = Str(rule, "action");
    if (action != "FailJob" && action != "Ignore" && action != "Count" && action != "FailIndex") {
      errs->push_back(
          NotSupportedError(at + ".action", action, {"Count", "FailIndex", "FailJob", "Ignore"}));
    }
    const Json& codes = Field(rule, "onExitCodes");
    const bool has_codes = codes.is_object();
    const bool has_conds = Field(rule, "onPodConditions").is_array();
    if (has_codes == has_conds) {
      errs->push_back({Type::kInvalid, at, "",
                       "specifying one of OnExitCodes and OnPodConditions is required"});
    }
    const std::string op = has_codes ? Str(codes, "operator") : "In";
    if (op != "In" && op != "NotIn") {
      errs->push_back(NotSupportedError(at + ".onExitCodes.operator", op, {"In", "NotIn"}));
    }
  }
}

void CheckImmutable(const Json& job, const Json& old, Errors* errs) {
  const Json& spec = Field(job, "spec");
  const Json& was = Field(old, "spec");
  // The template may change only while the job is suspended and has not started (a resumed
  // job's scheduling directives); the emulator holds it immutable apart from that.
  const bool suspended = Field(was, "suspend").is_boolean() && Field(was, "suspend").get<bool>();
  if (!suspended && Field(spec, "template") != Field(was, "template")) {
    errs->push_back({Type::kInvalid, "spec.template", "", "field is immutable"});
  }
  for (const char* key : {"selector", "completionMode"}) {
    if (Field(spec, key) != Field(was, key)) {
      errs->push_back({Type::kInvalid, std::string("spec.") + key, "", "field is immutable"});
    }
  }
  if (Field(spec, "completions") != Field(was, "completions") &&
      Str(spec, "completionMode") != kIndexed) {
    errs->push_back({Type::kInvalid, "spec.completions", ValueText(Field(spec, "completions")),
                     "field is immutable"});
  }
}

}  // namespace

std::vector<FieldError> FieldErrors(const Json& job, const Json* old) {
  Errors errs;
  const Json& spec = Field(job, "spec");
  if (!spec.is_object()) {
    errs.push_back({Type::kRequired, "spec", "", ""});
    return errs;
  }
  for (const char* key : {"parallelism", "completions", "backoffLimit", "backoffLimitPerIndex",
                          "maxFailedIndexes", "ttlSecondsAfterFinished"}) {
    CheckMin(spec, key, 0, &errs);
  }
  CheckMin(spec, "activeDeadlineSeconds", 1, &errs);
  CheckMode(spec, &errs);
  CheckTemplate(spec, &errs);
  CheckSelector(spec, &errs);
  CheckPodFailurePolicy(spec, &errs);
  if (old) CheckImmutable(job, *old, &errs);
  return errs;
}

Status Validate(const Json& job, const Json* old, std::vector<std::string>* /*warnings*/) {
  static const ResourceType& type = *FindByKind(kApiVersion, kKind);
  return InvalidObject(type, job, FieldErrors(job, old));
}

}  // namespace pjemu::api::batchjob
