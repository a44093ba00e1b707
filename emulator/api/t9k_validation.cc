#include "emulator/api/t9k_validation.h"

#include <set>

#include "emulator/api/json_fields.h"
#include "emulator/api/object_validation.h"
#include "emulator/api/resources.h"
#include "emulator/api/selector.h"
#include "emulator/api/t9k.h"

namespace pjemu::api::t9k {
namespace {

using Type = FieldError::Type;
using Errors = std::vector<FieldError>;

const std::vector<std::string> kRestartPolicies = {"Always", "OnFailure", "Never", "ExitCode"};
const std::vector<std::string> kRdzvBackends = {"c10d", "etcd", "etcd-v2"};
const std::vector<std::string> kCleanUpPolicies = {"None", "All", "Unfinished"};

// An integer of at least `min`; absent is fine.
void CheckMin(const Json& v, const std::string& field, std::int64_t min, Errors* errs) {
  if (v.is_null()) return;
  if (!v.is_number_integer() || v.get<std::int64_t>() < min) {
    errs->push_back({Type::kInvalid, field, ValueText(v),
                     "must be greater than or equal to " + std::to_string(min)});
  }
}

void CheckContainers(const Json& rspec, const std::string& path, Errors* errs) {
  const std::string cpath = path + ".template.spec.containers";
  const Json& containers = FieldAt(rspec, {"template", "spec", "containers"});
  if (!containers.is_array() || containers.empty()) {
    errs->push_back({Type::kRequired, cpath, "", "must have at least one container"});
    return;
  }
  for (std::size_t i = 0; i < containers.size(); ++i) {
    if (Str(containers[i], "image").empty()) {
      errs->push_back({Type::kRequired, cpath + "[" + std::to_string(i) + "].image", "", ""});
    }
  }
}

void CheckReplicaSpecs(const Json& spec, Errors* errs) {
  const Json& specs = Field(spec, "replicaSpecs");
  if (!specs.is_array() || specs.empty()) {
    errs->push_back(
        {Type::kRequired, "spec.replicaSpecs", "", "must have at least one replica spec"});
    return;
  }
  std::set<std::string> seen;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const std::string path = "spec.replicaSpecs[" + std::to_string(i) + "]";
    const std::string type = Str(specs[i], "type");
    if (type.empty()) {
      errs->push_back({Type::kRequired, path + ".type", "", ""});
    } else if (!ValidateDns1123Label(TypeName(specs[i])).empty()) {
      errs->push_back({Type::kInvalid, path + ".type", GoQuote(type),
                       "must be a lower-case RFC 1123 label (it names the pods)"});
    } else if (!seen.insert(TypeName(specs[i])).second) {
      errs->push_back({Type::kDuplicate, path + ".type", GoQuote(type), ""});
    }
    CheckMin(Field(specs[i], "replicas"), path + ".replicas", 0, errs);
    CheckSupported(Field(specs[i], "restartPolicy"), path + ".restartPolicy", kRestartPolicies,
                   errs);
    CheckContainers(specs[i], path, errs);
  }
}

void CheckTorchrun(const Json& job, Errors* errs) {
  const Json& torchrun = FieldAt(job, {"spec", "torchrunConfig"});
  if (torchrun.is_null()) return;
  CheckSupported(Field(torchrun, "rdzvBackend"), "spec.torchrunConfig.rdzvBackend", kRdzvBackends,
                 errs);
  CheckMin(Field(torchrun, "maxRestarts"), "spec.torchrunConfig.maxRestarts", 0, errs);
  if (!Field(torchrun, "procPerNode").is_null()) {
    Json probe = job;  // ProcPerNode reads the job; its error already names the field
    if (auto n = ProcPerNode(probe, Json::object()); !n.ok()) {
      errs->push_back({Type::kInvalid, "spec.torchrunConfig.procPerNode",
                       GoQuote(ValueText(Field(torchrun, "procPerNode"))),
                       "must be a positive number or \"gpu\""});
    }
  }
  const Json& extra = Field(torchrun, "extraOptions");
  if (!extra.is_null() && !extra.is_array()) {
    errs->push_back({Type::kInvalid, "spec.torchrunConfig.extraOptions", ValueText(extra),
                     "must be a list of strings"});
  }
}

void CheckElastic(const Json& job, const Json* old, Errors* errs) {
  const Json& elastic = FieldAt(job, {"spec", "elastic"});
  if (elastic.is_null()) return;
  for (const char* f : {"minReplicas", "maxReplicas", "expectedReplicas"}) {
    CheckMin(Field(elastic, f), std::string("spec.elastic.") + f, 1, errs);
  }
  auto min = OptInt(elastic, "minReplicas"), max = OptInt(elastic, "maxReplicas");
  auto expected = OptInt(elastic, "expectedReplicas");
  if (min && max && *min > *max) {
    errs->push_back({Type::kInvalid, "spec.elastic.maxReplicas", std::to_string(*max),
                     "must be greater than or equal to minReplicas"});
  }
  if (expected && ((min && *expected < *min) || (max && *expected > *max))) {
    errs->push_back({Type::kInvalid, "spec.elastic.expectedReplicas", std::to_string(*expected),
                     "must be within [minReplicas, maxReplicas]"});
  }
  if (!old) return;
  for (const char* f : {"minReplicas", "maxReplicas"}) {
    if (Field(elastic, f) != FieldAt(*old, {"spec", "elastic", f})) {
      errs->push_back({Type::kInvalid, std::string("spec.elastic.") + f,
                       ValueText(Field(elastic, f)), "field is immutable"});
    }
  }
}

void CheckRunPolicy(const Json& job, Errors* errs) {
  const Json& policy = FieldAt(job, {"spec", "runPolicy"});
  CheckMin(Field(policy, "activeDeadlineSeconds"), "spec.runPolicy.activeDeadlineSeconds", 1, errs);
  CheckMin(Field(policy, "backoffLimit"), "spec.runPolicy.backoffLimit", 0, errs);
  CheckSupported(Field(policy, "cleanUpPolicy"), "spec.runPolicy.cleanUpPolicy", kCleanUpPolicies,
                 errs);
}

// runMode's per-type lists name replica types the job has; pause.resumeSpecs never changes.
void CheckRunMode(const Json& job, const Json* old, Errors* errs) {
  std::set<std::string> types;
  for (const Json& r : ReplicaSpecs(job)) types.insert(Str(r, "type"));
  const std::pair<const char*, const char*> kLists[] = {{"debug", "replicaSpecs"},
                                                        {"pause", "resumeSpecs"}};
  for (const auto& [mode, list] : kLists) {
    const Json& items = FieldAt(job, {"spec", "runMode", mode, list});
    for (std::size_t i = 0; i < ArrayOr(items).size(); ++i) {
      const std::string type = Str(items[i], "type");
      if (!types.count(type)) {
        errs->push_back(
            {Type::kNotFound,
             std::string("spec.runMode.") + mode + "." + list + "[" + std::to_string(i) + "].type",
             GoQuote(type), "no replica spec has this type"});
      }
    }
  }
  if (old && FieldAt(job, {"spec", "runMode", "pause", "resumeSpecs"}) !=
                 FieldAt(*old, {"spec", "runMode", "pause", "resumeSpecs"})) {
    errs->push_back({Type::kInvalid, "spec.runMode.pause.resumeSpecs", "", "field is immutable"});
  }
}

void CheckScheduler(const Json& job, Errors* errs) {
  const Json& priority = FieldAt(job, {"spec", "scheduler", "t9kScheduler", "priority"});
  if (priority.is_null()) return;
  if (!priority.is_number_integer() || priority.get<std::int64_t>() < 0 ||
      priority.get<std::int64_t>() > 100) {
    errs->push_back({Type::kInvalid, "spec.scheduler.t9kScheduler.priority", ValueText(priority),
                     "must be between 0 and 100, inclusive"});
  }
}

void CheckName(const Json& job, Errors* errs) {
  // The pods are <name>-<5 hex>-<type>-<index>: the name must leave room in a 63-byte label.
  const std::string name = Str(Field(job, "metadata"), "name");
  std::vector<std::string> problems = ValidateDns1035Label(name);
  if (problems.empty()) return;
  std::string joined;
  for (const auto& p : problems) joined += (joined.empty() ? "" : ",") + p;
  errs->push_back({Type::kInvalid, "metadata.name", GoQuote(name), joined});
}

}  // namespace

std::vector<FieldError> FieldErrors(const Json& job, const Json* old) {
  Errors errs;
  CheckName(job, &errs);
  const Json& spec = Field(job, "spec");
  CheckReplicaSpecs(spec, &errs);
  CheckTorchrun(job, &errs);
  CheckElastic(job, old, &errs);
  CheckRunPolicy(job, &errs);
  CheckRunMode(job, old, &errs);
  CheckScheduler(job, &errs);
  return errs;
}

Status Validate(const Json& job, const Json* old, std::vector<std::string>* /*warnings*/) {
  static const ResourceType& type = *FindByKind(kApiVersion, kKind);
  return InvalidObject(type, job, FieldErrors(job, old));
}

}  // namespace pjemu::api::t9k
