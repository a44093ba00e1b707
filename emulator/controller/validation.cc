#include "emulator/controller/validation.h"

#include <regex>

#include "emulator/controller/job_spec.h"

namespace pjemu::controller {
namespace {

using Type = FieldError::Type;

constexpr char kWebhookName[] = "validator.pytorchjob.training-operator.kubeflow.org";
constexpr char kSpecs[] = "spec.pytorchReplicaSpecs";

const char* TypeText(Type t) {
  switch (t) {
    case Type::kRequired:
      return "Required value";
    case Type::kForbidden:
      return "Forbidden";
    case Type::kInvalid:
      return "Invalid value";
    case Type::kNotSupported:
      return "Unsupported value";
  }
  return "";
}

const char* CauseReason(Type t) {
  switch (t) {
    case Type::kRequired:
      return "FieldValueRequired";
    case Type::kForbidden:
      return "FieldValueForbidden";
    case Type::kInvalid:
      return "FieldValueInvalid";
    case Type::kNotSupported:
      return "FieldValueNotSupported";
  }
  return "";
}

std::string Quote(const std::string& s) { return Json(s).dump(); }

// NameIsDNS1035Label's messages (IsDNS1035Label in apimachinery).
std::vector<std::string> Dns1035Errors(const std::string& name) {
  std::vector<std::string> errs;
  if (name.size() > 63) errs.push_back("must be no more than 63 characters");
  static const std::regex kRe("[a-z]([-a-z0-9]*[a-z0-9])?");
  if (!std::regex_match(name, kRe)) {
    errs.push_back(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
        "an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
        "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')");
  }
  return errs;
}

std::string GoValue(const Json& v) {
  if (v.is_null()) return "null";
  if (v.is_string()) return Quote(v.get<std::string>());
  return v.dump();
}

void ValidateReplicaSpecs(const Json& job, std::vector<FieldError>* errs) {
  const Json& specs = Field(Field(job, "spec"), "pytorchReplicaSpecs");
  if (specs.is_null()) {
    errs->push_back({Type::kRequired, kSpecs, "", "must be required"});
    return;
  }
  for (const std::string& rtype : ReplicaTypes(job)) {
    const std::string role_path = std::string(kSpecs) + "[" + rtype + "]";
    const std::string containers_path = role_path + ".template.spec.containers";
    const Json& rspec = ReplicaSpec(job, rtype);
    if (rtype != kMaster && rtype != kWorker) {
      errs->push_back({Type::kNotSupported, role_path, Quote(rtype),
                       "supported values: \"Master\", \"Worker\""});
    }
    const Json& containers = Field(Field(Field(rspec, "template"), "spec"), "containers");
    if (!containers.is_array() || containers.empty()) {
      errs->push_back({Type::kRequired, containers_path, "", "must be specified"});
    }
    bool default_container = false;
    if (containers.is_array()) {
      for (std::size_t i = 0; i < containers.size(); ++i) {
        if (Str(containers[i], "image").empty()) {
          errs->push_back({Type::kRequired, containers_path + "[" + std::to_string(i) + "].image",
                           "", "must be required"});
        }
        if (Str(containers[i], "name") == kDefaultContainerName) default_container = true;
      }
    }
    if (!default_container) {
      errs->push_back(
          {Type::kRequired, containers_path, "",
           std::string("must have at least one container with name ") + kDefaultContainerName});
    }
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

Json Details(const Json& job, const std::vector<FieldError>& errs) {
  Json causes = Json::array();
  for (const FieldError& e : errs) {
    std::string message = e.ToString().substr(e.field.size() + 2);
    causes.push_back({{"reason", CauseReason(e.type)}, {"message", message}, {"field", e.field}});
  }
  return {{"name", Str(Field(job, "metadata"), "name")},
          {"group", "kubeflow.org"},
          {"kind", kKind},
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
  std::string s = field + ": " + TypeText(type);
  if (!value.empty()) s += ": " + value;
  if (!detail.empty()) s += ": " + detail;
  return s;
}

std::vector<FieldError> WebhookFieldErrors(const Json& job, const Json* old,
                                           std::vector<std::string>* warnings) {
  std::vector<FieldError> errs;
  const std::string name = Str(Field(job, "metadata"), "name");
  std::vector<std::string> name_errs = Dns1035Errors(name);
  if (!name_errs.empty()) {
    std::string joined;
    for (const auto& e : name_errs) joined += (joined.empty() ? "" : ",") + e;
    errs.push_back({Type::kInvalid, "metadata.name", Quote(name), "should match: " + joined});
  }
  const Json& run_policy = Field(Field(job, "spec"), "runPolicy");
  if (old) {
    const Json& before = Field(Field(Field(*old, "spec"), "runPolicy"), "managedBy");
    const Json& now = Field(run_policy, "managedBy");
    if (before != now) {
      errs.push_back(
          {Type::kInvalid, "spec.runPolicy.managedBy", GoValue(now), "field is immutable"});
    }
  }
  const Json& managed_by = Field(run_policy, "managedBy");
  if (!managed_by.is_null()) {
    std::string m = managed_by.is_string() ? managed_by.get<std::string>() : managed_by.dump();
    if (m != kManagedByTrainingOperator && m != kManagedByMultiKueue) {
      errs.push_back({Type::kNotSupported, "spec.runPolicy.managedBy", Quote(m),
                      std::string("supported values: ") + Quote(kManagedByTrainingOperator) + ", " +
                          Quote(kManagedByMultiKueue)});
    }
  }
  const Json& spec = Field(job, "spec");
  const Json& elastic = Field(spec, "elasticPolicy");
  if (!elastic.is_null()) {
    const Json& specs = Field(spec, "pytorchReplicaSpecs");
    if (!specs.is_object() || !specs.contains(kWorker)) {
      errs.push_back({Type::kRequired, std::string(kSpecs) + "[Worker]", "",
                      "must be configured if elastic policy is used"});
    }
    if (!Field(elastic, "nProcPerNode").is_null()) {
      if (warnings) {
        warnings->push_back(
            "spec.elasticPolicy.nProcPerNode is deprecated, use spec.nprocPerNode instead");
      }
      if (!Field(spec, "nprocPerNode").is_null()) {
        errs.push_back({Type::kForbidden, "spec.elasticPolicy.nProcPerNode", "",
                        "must not be used with spec.nprocPerNode"});
      }
    }
  }
  ValidateReplicaSpecs(job, &errs);
  return errs;
}

Status ValidatePyTorchJob(const Json& job, const Json* old, std::vector<std::string>* warnings) {
  const std::string name = Str(Field(job, "metadata"), "name");
  std::vector<FieldError> cel = CelErrors(job, old);
  if (!cel.empty()) {
    return Status(
        Code::kInvalid,
        std::string(kKind) + ".kubeflow.org " + Quote(name) + " is invalid: " + Aggregate(cel),
        Details(job, cel));
  }
  // ValidateUpdate passes the new object as the old one (spec 21), so the managedBy
  // immutability rule never fires on a real update.
  std::vector<FieldError> errs = WebhookFieldErrors(job, old ? &job : nullptr, warnings);
  if (errs.empty()) return Status::Ok();
  return Status(Code::kForbidden,
                std::string("admission webhook \"") + kWebhookName +
                    "\" denied the request: " + Aggregate(errs),
                Details(job, errs));
}

}  // namespace pjemu::controller
