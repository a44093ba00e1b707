#include "emulator/api/pytorchjob.h"

#include <algorithm>
#include <cctype>

#include "emulator/api/json_fields.h"
#include "emulator/common/strings.h"

namespace pjemu::api {
namespace {

// The key defaulting renames case-insensitively to Master/Worker (setTypeNamesToCamelCase).
void CamelCaseReplicaKeys(Json& specs) {
  for (const char* canonical : {kMaster, kWorker}) {
    for (auto it = specs.begin(); it != specs.end(); ++it) {
      if (it.key() != canonical && AsciiLower(it.key()) == AsciiLower(canonical)) {
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

void DefaultRunPolicy(Json& spec) {
  Json& run_policy = spec["runPolicy"];
  if (!run_policy.is_object()) run_policy = Json::object();
  if (!run_policy.contains("cleanPodPolicy") || run_policy["cleanPodPolicy"].is_null()) {
    run_policy["cleanPodPolicy"] = "None";
  }
}

void DefaultReplicaSpecs(Json& spec) {
  Json& specs = spec["pytorchReplicaSpecs"];
  if (!specs.is_object()) return;
  CamelCaseReplicaKeys(specs);
  for (auto& [rtype, rspec] : specs.items()) {
    if (!rspec.is_object()) continue;
    if (!rspec.contains("replicas") || rspec["replicas"].is_null()) rspec["replicas"] = 1;
    if (Str(rspec, "restartPolicy").empty()) rspec["restartPolicy"] = "OnFailure";
    DefaultPort(rspec);
  }
}

// elasticPolicy's missing bound copies the other; with neither, both are the worker count.
void DefaultElasticPolicy(const Json& job, Json& spec) {
  if (!spec.contains("elasticPolicy") || !spec["elasticPolicy"].is_object()) return;
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

// nprocPerNode "auto" unless it or the deprecated elasticPolicy.nProcPerNode is set.
void DefaultNprocPerNode(Json& spec) {
  const Json* elastic = spec.contains("elasticPolicy") && spec["elasticPolicy"].is_object()
                            ? &spec["elasticPolicy"]
                            : nullptr;
  bool elastic_nproc =
      elastic && elastic->contains("nProcPerNode") && !(*elastic)["nProcPerNode"].is_null();
  if (!elastic_nproc && (!spec.contains("nprocPerNode") || spec["nprocPerNode"].is_null())) {
    spec["nprocPerNode"] = "auto";
  }
}

}  // namespace

Json SetDefaults(Json job) {
  Json& spec = job["spec"];
  if (!spec.is_object()) spec = Json::object();
  DefaultRunPolicy(spec);
  DefaultReplicaSpecs(spec);
  DefaultElasticPolicy(job, spec);
  DefaultNprocPerNode(spec);
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

void SetSuspended(Json& job, bool suspend) { job["spec"]["runPolicy"]["suspend"] = suspend; }

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

}  // namespace pjemu::api
