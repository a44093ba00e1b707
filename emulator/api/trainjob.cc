#include "emulator/api/trainjob.h"

#include <regex>
#include <set>

#include "emulator/api/json_fields.h"
#include "emulator/api/object_validation.h"
#include "emulator/api/resources.h"
#include "emulator/api/structured_merge.h"

namespace pjemu::api::trainjob {
namespace {

using Type = FieldError::Type;
using Errors = std::vector<FieldError>;

std::string Text(const Json& v) { return v.is_string() ? GoQuote(v.get<std::string>()) : v.dump(); }

void CheckName(const Json& tj, Errors* errs) {
  static const std::regex re("^[a-z]([-a-z0-9]*[a-z0-9])?$");
  const std::string name = Str(Field(tj, "metadata"), "name");
  if (name.empty()) return;  // generateName: the store names it
  if (name.size() > 63 || !std::regex_match(name, re)) {
    errs->push_back({Type::kInvalid, "metadata.name", GoQuote(name),
                     "metadata.name must be a valid DNS label"});
  }
}

void CheckCounts(const Json& trainer, Errors* errs) {
  for (const char* key : {"numNodes", "numProcPerNode"}) {
    const Json& v = Field(trainer, key);
    if (v.is_null()) continue;
    if (!v.is_number_integer() || v.get<std::int64_t>() < 1) {
      errs->push_back({Type::kInvalid, std::string("spec.trainer.") + key, Text(v),
                       "spec.trainer." + std::string(key) + " in body should be greater than or "
                       "equal to 1"});
    }
  }
}

// runtimePatches: a list-map keyed by manager (required, unique), at most kMaxRuntimePatches;
// each trainingRuntimeSpec's keyed lists name their keys.
void CheckRuntimePatches(const Json& tj, Errors* errs) {
  const Json& patches = FieldAt(tj, {"spec", "runtimePatches"});
  if (!patches.is_array()) return;
  if (patches.size() > kMaxRuntimePatches) {
    errs->push_back({Type::kTooMany, "spec.runtimePatches", std::to_string(patches.size()),
                     "must have at most " + std::to_string(kMaxRuntimePatches) + " items"});
  }
  std::set<std::string> managers;
  for (std::size_t i = 0; i < patches.size(); ++i) {
    const std::string at = "spec.runtimePatches[" + std::to_string(i) + "]";
    const std::string manager = Str(patches[i], "manager");
    if (manager.empty()) {
      errs->push_back({Type::kRequired, at + ".manager", "", ""});
    } else if (!managers.insert(manager).second) {
      errs->push_back({Type::kDuplicate, at, "{\"manager\":" + GoQuote(manager) + "}", ""});
    }
    Status keyed = ValidateApplied(Field(patches[i], "trainingRuntimeSpec"), RuntimeSpecSchema());
    if (!keyed.ok()) {
      errs->push_back({Type::kInvalid, at + ".trainingRuntimeSpec", "\"object\"", keyed.message()});
    }
  }
}

// x-kubernetes-validations `self == oldSelf`.
void CheckImmutable(const Json& tj, const Json& old, Errors* errs) {
  for (const char* key :
       {"runtimeRef", "initializer", "trainer", "activeDeadlineSeconds", "managedBy"}) {
    const Json& now = FieldAt(tj, {"spec", key});
    const Json& was = FieldAt(old, {"spec", key});
    if (now != was) {
      errs->push_back({Type::kInvalid, std::string("spec.") + key, now.is_object() ? "\"object\"" : Text(now),
                       "field is immutable"});
    }
  }
}

}  // namespace

void SetDefaults(Json& tj) {
  if (!tj.is_object() || !tj["spec"].is_object()) return;
  Json& spec = tj["spec"];
  if (spec["runtimeRef"].is_object()) {
    SetIfAbsent(spec["runtimeRef"], "apiGroup", kGroup);
    SetIfAbsent(spec["runtimeRef"], "kind", kClusterTrainingRuntime);
  }
  SetIfAbsent(spec, "suspend", false);
  SetIfAbsent(spec, "managedBy", kManagedByDefault);
}

std::vector<FieldError> CelErrors(const Json& tj, const Json* old) {
  Errors errs;
  CheckName(tj, &errs);
  if (Str(FieldAt(tj, {"spec", "runtimeRef"}), "name").empty()) {
    errs.push_back({Type::kRequired, "spec.runtimeRef.name", "", ""});
  }
  CheckCounts(FieldAt(tj, {"spec", "trainer"}), &errs);
  const Json& deadline = FieldAt(tj, {"spec", "activeDeadlineSeconds"});
  if (!deadline.is_null() && (!deadline.is_number_integer() || deadline.get<std::int64_t>() < 1)) {
    errs.push_back({Type::kInvalid, "spec.activeDeadlineSeconds", Text(deadline),
                    "spec.activeDeadlineSeconds in body should be greater than or equal to 1"});
  }
  CheckRuntimePatches(tj, &errs);
  if (old) CheckImmutable(tj, *old, &errs);
  return errs;
}

const FieldSchema& RuntimeSpecSchema() {
  static const TypeSchema* schema = [] {
    const std::string rjob = "template.spec.replicatedJobs[]";
    std::vector<std::string> rules = {"template.spec.replicatedJobs keys name",
                                      "template.metadata.labels map",
                                      "template.metadata.annotations map"};
    for (const std::string& meta : {rjob + ".template.metadata", rjob + ".template.spec.template.metadata"}) {
      rules.push_back(meta + ".labels map");
      rules.push_back(meta + ".annotations map");
    }
    for (auto& line : PodSpecRules(rjob + ".template.spec.template.spec")) rules.push_back(line);
    auto compiled = CompileFieldRules({rules, "{}"});
    return new TypeSchema(std::move(*compiled));  // immortal: used until exit
  }();
  return schema->root;
}

std::vector<FieldError> WebhookErrors(const Json& tj) {
  static const std::set<std::string> kReserved = {kEnvNumNodes, kEnvNumProcPerNode, kEnvNodeRank,
                                                  kEnvMasterAddr, kEnvMasterPort};
  const Json& trainer = FieldAt(tj, {"spec", "trainer"});
  // torchtune's entrypoint gets its distributed flags as arguments, not env.
  if (Field(trainer, "command") == Json::array({"tune", "run"})) return {};
  std::set<std::string> found;
  for (const Json& e : ArrayOr(Field(trainer, "env"))) {
    if (kReserved.count(Str(e, "name"))) found.insert(Str(e, "name"));
  }
  if (found.empty()) return {};
  std::string list;
  for (const std::string& n : found) list += (list.empty() ? "" : " ") + n;
  return {{Type::kInvalid, "spec.trainer.env", Field(trainer, "env").dump(),
           "must not have reserved envs, invalid envs configured: [" + list + "]"}};
}

Status Validate(const Json& tj, const Json* old, std::vector<std::string>* /*warnings*/) {
  static const ResourceType& type = *FindByKind(kApiVersion, kKind);
  RETURN_IF_ERROR(InvalidObject(type, tj, CelErrors(tj, old)));
  return WebhookDenied(type, kWebhookName, tj, WebhookErrors(tj));
}

Json DefaultClusterTrainingRuntime() {
  return Json::parse(std::string(R"({
    "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
    "metadata": {"name": "torch-distributed", "labels": {"trainer.kubeflow.org/framework": "torch"}},
    "spec": {"mlPolicy": {"numNodes": 1, "torch": {}},
      "template": {"spec": {"replicatedJobs": [{"name": "node",
        "template": {"metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
          "spec": {"template": {"spec": {"containers": [
            {"name": "node", "image": ")") + kDefaultRuntimeImage + R"("}]}}}}}]}}}})");
}

std::pair<std::string, std::string> RuntimeRef(const Json& tj) {
  const Json& ref = FieldAt(tj, {"spec", "runtimeRef"});
  std::string kind = Str(ref, "kind");
  return {kind.empty() ? kClusterTrainingRuntime : kind, Str(ref, "name")};
}

bool IsFinished(const Json& tj) {
  return api::TrueCondition(tj, kComplete) != nullptr || api::TrueCondition(tj, kFailed) != nullptr;
}

}  // namespace pjemu::api::trainjob
