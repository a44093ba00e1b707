#include "emulator/controller/job_spec.h"

#include <algorithm>
#include <cctype>

namespace pjemu::controller {
namespace {

const Json kNull = nullptr;

// The key defaulting renames case-insensitively to Master/Worker (setTypeNamesToCamelCase).
void CamelCaseReplicaKeys(Json& specs) {
  for (const char* canonical : {kMaster, kWorker}) {
    for (auto it = specs.begin(); it != specs.end(); ++it) {
      if (it.key() != canonical && Lower(it.key()) == Lower(canonical)) {
        Json value = it.value();
        specs.erase(it.key());
        specs[canonical] = std::move(value);
        break;
      }
    }
  }
}

void DefaultPort(Json& spec) {
  if (!Field(Field(Field(spec, "template"), "spec"), "containers").is_array()) return;
  Json& containers = spec["template"]["spec"]["containers"];
  if (containers.empty()) return;
  std::size_t index = 0;
  for (std::size_t i = 0; i < containers.size(); ++i) {
    if (Str(containers[i], "name") == kDefaultContainerName) {
      index = i;
      break;
    }
  }
  if (!containers[index].is_object()) return;
  Json& ports = containers[index]["ports"];
  if (!ports.is_array()) ports = Json::array();
  for (const Json& p : ports) {
    if (Str(p, "name") == kDefaultPortName) return;
  }
  ports.push_back({{"name", kDefaultPortName}, {"containerPort", kDefaultPort}});
}

}  // namespace

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

const Json& Field(const Json& obj, const char* key) {
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

std::string Str(const Json& obj, const char* key) {
  const Json& v = Field(obj, key);
  return v.is_string() ? v.get<std::string>() : "";
}

std::optional<std::int64_t> OptInt(const Json& obj, const char* key) {
  if (!obj.is_object()) return std::nullopt;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return std::nullopt;
  return it->get<std::int64_t>();
}

Json SetDefaults(Json job) {
  Json& spec = job["spec"];
  if (!spec.is_object()) spec = Json::object();
  Json& run_policy = spec["runPolicy"];
  if (!run_policy.is_object()) run_policy = Json::object();
  if (!run_policy.contains("cleanPodPolicy") || run_policy["cleanPodPolicy"].is_null()) {
    run_policy["cleanPodPolicy"] = "None";
  }
  Json& specs = spec["pytorchReplicaSpecs"];
  if (specs.is_object()) {
    CamelCaseReplicaKeys(specs);
    for (auto& [rtype, rspec] : specs.items()) {
      if (!rspec.is_object()) continue;
      if (!rspec.contains("replicas") || rspec["replicas"].is_null()) rspec["replicas"] = 1;
      if (Str(rspec, "restartPolicy").empty()) rspec["restartPolicy"] = "OnFailure";
      DefaultPort(rspec);
    }
  }
  if (spec.contains("elasticPolicy") && spec["elasticPolicy"].is_object()) {
    Json& elastic = spec["elasticPolicy"];
    auto min = OptInt(elastic, "minReplicas");
    auto max = OptInt(elastic, "maxReplicas");
    if (min && !max) {
      elastic["maxReplicas"] = *min;
    } else if (!min && max) {
      elastic["minReplicas"] = *max;
    } else if (!min && !max) {
      std::int64_t workers = Replicas(ReplicaSpec(job, kWorker));
      elastic["minReplicas"] = workers;
      elastic["maxReplicas"] = workers;
    }
  }
  const Json* elastic = spec.contains("elasticPolicy") && spec["elasticPolicy"].is_object()
                            ? &spec["elasticPolicy"]
                            : nullptr;
  bool elastic_nproc =
      elastic && elastic->contains("nProcPerNode") && !(*elastic)["nProcPerNode"].is_null();
  if (!elastic_nproc && (!spec.contains("nprocPerNode") || spec["nprocPerNode"].is_null())) {
    spec["nprocPerNode"] = "auto";
  }
  return job;
}

std::vector<std::string> ReplicaTypes(const Json& job) {
  std::vector<std::string> out;
  const Json& specs = Field(Field(job, "spec"), "pytorchReplicaSpecs");
  if (!specs.is_object()) return out;
  for (auto it = specs.begin(); it != specs.end(); ++it) out.push_back(it.key());
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
    if ((a == kMaster) != (b == kMaster)) return a == kMaster;
    return a < b;
  });
  return out;
}

const Json& ReplicaSpec(const Json& job, const std::string& rtype) {
  return Field(Field(Field(job, "spec"), "pytorchReplicaSpecs"), rtype.c_str());
}

bool HasMaster(const Json& job) { return !ReplicaSpec(job, kMaster).is_null(); }

std::int64_t Replicas(const Json& spec) { return OptInt(spec, "replicas").value_or(1); }

std::int64_t TotalReplicas(const Json& job) {
  std::int64_t total = 0;
  for (const auto& rtype : ReplicaTypes(job)) total += Replicas(ReplicaSpec(job, rtype));
  return total;
}

std::string RestartPolicy(const Json& spec) { return Str(spec, "restartPolicy"); }

std::string GenGeneralName(const std::string& job, const std::string& rtype,
                           const std::string& index) {
  std::string name = job + "-" + Lower(rtype) + "-" + index;
  std::replace(name.begin(), name.end(), '/', '-');
  return name;
}

Json GenLabels(const std::string& job_name) {
  std::string name = job_name;
  std::replace(name.begin(), name.end(), '/', '-');
  return {{kOperatorNameLabel, kControllerName}, {kJobNameLabel, name}};
}

std::string ReplicaSelector(const std::string& job_name, const std::string& rtype) {
  // FormatLabelSelector sorts the keys; these three already sort in this order.
  return std::string(kJobNameLabel) + "=" + job_name + "," + kOperatorNameLabel + "=" +
         kControllerName + "," + kReplicaTypeLabel + "=" + Lower(rtype);
}

Json OwnerReference(const Json& job) {
  const Json& meta = Field(job, "metadata");
  return {{"apiVersion", kApiVersion}, {"kind", kKind},      {"name", Str(meta, "name")},
          {"uid", Str(meta, "uid")},   {"controller", true}, {"blockOwnerDeletion", true}};
}

Result<std::int64_t> PortFromJob(const Json& job, const std::string& rtype) {
  const Json& containers =
      Field(Field(Field(ReplicaSpec(job, rtype), "template"), "spec"), "containers");
  if (containers.is_array()) {
    for (const Json& c : containers) {
      const Json& ports = Field(c, "ports");
      if (Str(c, "name") != kDefaultContainerName || !ports.is_array()) continue;
      for (const Json& p : ports) {
        if (Str(p, "name") == kDefaultPortName) return OptInt(p, "containerPort").value_or(0);
      }
    }
  }
  return Status(Code::kNotFound, "failed to found the port");
}

bool IsSuspended(const Json& job) {
  const Json& suspend = Field(Field(Field(job, "spec"), "runPolicy"), "suspend");
  return suspend.is_boolean() && suspend.get<bool>();
}

std::optional<std::string> ManagedByExternalController(const Json& job) {
  const Json& managed_by = Field(Field(Field(job, "spec"), "runPolicy"), "managedBy");
  if (!managed_by.is_string()) return std::nullopt;
  std::string manager = managed_by.get<std::string>();
  if (manager == kManagedByTrainingOperator) return std::nullopt;
  return manager;
}

}  // namespace pjemu::controller
