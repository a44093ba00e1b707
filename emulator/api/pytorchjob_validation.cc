#include "emulator/api/pytorchjob_validation.h"

#include "emulator/api/json_fields.h"
#include "emulator/api/pytorchjob.h"
#include "emulator/api/selector.h"

namespace pjemu::api {
namespace {

using Type = FieldError::Type;

constexpr char kWebhookName[] = "validator.pytorchjob.training-operator.kubeflow.org";
constexpr char kSpecs[] = "spec.pytorchReplicaSpecs";

// How each error type prints (field.ErrorType) and its cause reason (metav1.CauseType), in the
// order of FieldError::Type.
struct TypeNames {
  const char* text;
  const char* cause;
};
constexpr TypeNames kTypeNames[] = {
    {"Required value", "FieldValueRequired"},
    {"Forbidden", "FieldValueForbidden"},
    {"Invalid value", "FieldValueInvalid"},
    {"Unsupported value", "FieldValueNotSupported"},
    {"Not found", "FieldValueNotFound"},
    {"Duplicate value", "FieldValueDuplicate"},
    {"Too long", "FieldValueTooLong"},
    {"Too many", "FieldValueTooMany"},
};
const TypeNames& NamesOf(Type t) { return kTypeNames[static_cast<int>(t)]; }

std::string Quote(const std::string& s) { return Json(s).dump(); }

std::string GoValue(const Json& v) {
  if (v.is_null()) return "null";
  if (v.is_string()) return Quote(v.get<std::string>());
  return v.dump();
}

// The containers of one replica spec: present, each with an image, one named pytorch.
void ValidateContainers(const Json& rspec, const std::string& role_path,
                        std::vector<FieldError>* errs) {
  const std::string containers_path = role_path + ".template.spec.containers";
  const Json& containers = Field(Field(Field(rspec, "template"), "spec"), "containers");
  if (!containers.is_array() || containers.empty()) {
    errs->push_back({Type::kRequired, containers_path, "", "must be specified"});
  }
  bool default_container = false;
  for (std::size_t i = 0; i < ArrayOr(containers).size(); ++i) {
    if (Str(containers[i], "image").empty()) {
      errs->push_back({Type::kRequired, containers_path + "[" + std::to_string(i) + "].image", "",
                       "must be required"});
    }
    if (Str(containers[i], "name") == kDefaultContainerName) default_container = true;
  }
  if (!default_container) {
    errs->push_back(
        {Type::kRequired, containers_path, "",
         std::string("must have at least one container with name ") + kDefaultContainerName});
  }
}

void ValidateReplicaSpecs(const Json& job, std::vector<FieldError>* errs) {
  const Json& specs = Field(Field(job, "spec"), "pytorchReplicaSpecs");
  if (specs.is_null()) {
    errs->push_back({Type::kRequired, kSpecs, "", "must be required"});
    return;
  }
  for (const std::string& rtype : ReplicaTypes(job)) {
    const std::string role_path = std::string(kSpecs) + "[" + rtype + "]";
    const Json& rspec = ReplicaSpec(job, rtype);
    if (rtype != kMaster && rtype != kWorker) {
      errs->push_back({Type::kNotSupported, role_path, Quote(rtype),
                       "supported values: \"Master\", \"Worker\""});
    }
    ValidateContainers(rspec, role_path, errs);
    auto replicas = OptInt(rspec, "replicas");
    if (rtype == kMaster) {
      if (!replicas || *replicas != 1) {
        errs->push_back({Type::kForbidden, role_path + ".replicas", "", "must be 1"});
      }
    } else if (replicas && *replicas < 1) {
      errs->push_back({Type::kForbidden, role_path + ".replicas", "", "must be at least 1"});
    }
  }
}

// metadata.name must be a DNS-1035 label (the pods' and services' names derive from it).
void ValidateName(const Json& job, std::vector<FieldError>* errs) {
  const std::string name = Str(Field(job, "metadata"), "name");
  std::vector<std::string> name_errs = ValidateDns1035Label(name);
  if (name_errs.empty()) return;
  std::string joined;
  for (const auto& e : name_errs) joined += (joined.empty() ? "" : ",") + e;
  errs->push_back({Type::kInvalid, "metadata.name", Quote(name), "should match: " + joined});
}

// runPolicy.managedBy: immutable on update, one of the two supported managers.
void ValidateManagedBy(const Json& job, const Json* old, std::vector<FieldError>* errs) {
  const Json& managed_by = Field(Field(Field(job, "spec"), "runPolicy"), "managedBy");
  if (old) {
    const Json& before = Field(Field(Field(*old, "spec"), "runPolicy"), "managedBy");
    if (before != managed_by) {
      errs->push_back(
          {Type::kInvalid, "spec.runPolicy.managedBy", GoValue(managed_by), "field is immutable"});
    }
  }
  if (managed_by.is_null()) return;
  std::string m = managed_by.is_string() ? managed_by.get<std::string>() : managed_by.dump();
  if (m != kManagedByTrainingOperator && m != kManagedByMultiKueue) {
    errs->push_back({Type::kNotSupported, "spec.runPolicy.managedBy", Quote(m),
                     std::string("supported values: ") + Quote(kManagedByTrainingOperator) + ", " +
                         Quote(kManagedByMultiKueue)});
  }
}

// elasticPolicy needs a Worker spec; its nProcPerNode is deprecated and excludes nprocPerNode.
void ValidateElasticPolicy(const Json& job, std::vector<FieldError>* errs,
                           std::vector<std::string>* warnings) {
  const Json& spec = Field(job, "spec");
  const Json& elastic = Field(spec, "elasticPolicy");
  if (elastic.is_null()) return;
  const Json& specs = Field(spec, "pytorchReplicaSpecs");
  if (!specs.is_object() || !specs.contains(kWorker)) {
    errs->push_back({Type::kRequired, std::string(kSpecs) + "[Worker]", "",
                     "must be configured if elastic policy is used"});
  }
  if (Field(elastic, "nProcPerNode").is_null()) return;
  if (warnings) {
    warnings->push_back(
        "spec.elasticPolicy.nProcPerNode is deprecated, use spec.nprocPerNode instead");
  }
  if (!Field(spec, "nprocPerNode").is_null()) {
    errs->push_back({Type::kForbidden, "spec.elasticPolicy.nProcPerNode", "",
                     "must not be used with spec.nprocPerNode"});
  }
}

Json Details(const Json& job, const std::vector<FieldError>& errs) {
  Json causes = Json::array();
  for (const FieldError& e : errs) {
    std::string message = e.ToString().substr(e.field.size() + 2);
    causes.push_back({{"reason", NamesOf(e.type).cause}, {"message", message}, {"field", e.field}});
  }
  return {{"name", Str(Field(job, "metadata"), "name")},
          {"group", kPyTorchJobGroup},
          {"kind", kPyTorchJobKind},
          {"causes", causes}};
}

std::string Aggregate(const std::vector<FieldError>& errs) {
  if (errs.size() == 1) return errs[0].ToString();
  std::string out = "[";
  for (std::size_t i = 0; i < errs.size(); ++i) {
    if (i) out += ", ";
    out += errs[i].ToString();
  }
  return out + "]";
}

// The CRD's x-kubernetes-validations rule `self == oldSelf` on schedulingPolicy.queue.
std::vector<FieldError> CelErrors(const Json& job, const Json* old) {
  if (!old) return {};
  auto queue_of = [](const Json& j) -> const Json& {
    return Field(Field(Field(Field(j, "spec"), "runPolicy"), "schedulingPolicy"), "queue");
  };
  const Json& now = queue_of(job);
  const Json& before = queue_of(*old);
  if (now.is_null() || before.is_null() || now == before) return {};
  return {{Type::kInvalid, "spec.runPolicy.schedulingPolicy.queue", "\"string\"",
           "spec.runPolicy.schedulingPolicy.queue is immutable"}};
}

}  // namespace

std::string FieldError::ToString() const {
  std::string s = field + ": " + NamesOf(type).text;
  if (!value.empty()) s += ": " + value;
  if (!detail.empty()) s += ": " + detail;
  return s;
}

const char* FieldError::CauseReason() const { return NamesOf(type).cause; }

std::vector<FieldError> WebhookFieldErrors(const Json& job, const Json* old,
                                           std::vector<std::string>* warnings) {
  std::vector<FieldError> errs;
  ValidateName(job, &errs);
  ValidateManagedBy(job, old, &errs);
  ValidateElasticPolicy(job, &errs, warnings);
  ValidateReplicaSpecs(job, &errs);
  return errs;
}

Status ValidatePyTorchJob(const Json& job, const Json* old, std::vector<std::string>* warnings) {
  const std::string name = Str(Field(job, "metadata"), "name");
  std::vector<FieldError> cel = CelErrors(job, old);
  if (!cel.empty()) {
    return Status(Code::kInvalid,
                  std::string(kPyTorchJobKind) + "." + kPyTorchJobGroup + " " + Quote(name) +
                      " is invalid: " + Aggregate(cel),
                  Details(job, cel));
  }
  // Upstream's ValidateUpdate hands the new object in as the old one too, so the managedBy
  // immutability rule never fires on a real update; pjemu does the same.
  std::vector<FieldError> errs = WebhookFieldErrors(job, old ? &job : nullptr, warnings);
  if (errs.empty()) return Status::Ok();
  return Status(Code::kForbidden,
                std::string("admission webhook \"") + kWebhookName +
                    "\" denied the request: " + Aggregate(errs),
                Details(job, errs));
}

}  // namespace pjemu::api
