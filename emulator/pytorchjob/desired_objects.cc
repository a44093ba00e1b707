#include "emulator/pytorchjob/desired_objects.h"

#include <algorithm>
#include <charconv>
#include <utility>

#include "emulator/api/json_fields.h"
#include "emulator/common/strings.h"
#include "emulator/pytorchjob/job_spec.h"

namespace pjemu::pytorchjob {

using api::Field, api::HasMaster, api::OptInt, api::ReplicaSpec, api::ReplicaTypes,
    api::Replicas, api::RestartPolicy, api::Str, api::TotalReplicas;
using api::kDefaultContainerName, api::kJobRoleLabel, api::kLegacyJobNameLabel, api::kMaster,
    api::kReplicaIndexLabel, api::kReplicaTypeLabel, api::kWorker;

namespace {

Json Env(const std::string& name, const std::string& value) {
  return {{"name", name}, {"value", value}};
}

// int(spec.nprocPerNode) when it parses as an integer, else 1 (getNprocPerNodeInt).
std::int64_t NprocPerNodeInt(const Json& job) {
  const Json& nproc = Field(Field(job, "spec"), "nprocPerNode");
  if (!nproc.is_string()) return 1;
  const std::string s = nproc.get<std::string>();
  std::int64_t n = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) return 1;
  return n;
}

std::string IntText(const Json& v) {
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  return v.is_string() ? v.get<std::string>() : v.dump();
}

}  // namespace

std::string PodRestartPolicy(const std::string& replica_policy) {
  return replica_policy == "ExitCode" ? "Never" : replica_policy;
}

bool IsMasterRole(const Json& job, const std::string& rtype, std::int64_t index) {
  if (HasMaster(job)) return rtype == kMaster;
  return rtype == kWorker && index == 0;
}

Result<Json> ElasticEnv(const Json& job) {
  Json env = Json::array();
  const Json& elastic = Field(Field(job, "spec"), "elasticPolicy");
  if (!elastic.is_object()) return env;
  std::string host = Str(elastic, "rdzvHost");
  if (host.empty()) host = Str(Field(job, "metadata"), "name") + "-worker-0";
  std::int64_t port = 0;
  if (auto p = OptInt(elastic, "rdzvPort")) {
    port = *p;
  } else {
    ASSIGN_OR_RETURN(port, PortFromJob(job, kWorker));
  }
  env.push_back(Env("PET_RDZV_ENDPOINT", host + ":" + std::to_string(port)));
  std::string backend = Str(elastic, "rdzvBackend");
  env.push_back(Env("PET_RDZV_BACKEND", backend.empty() ? "c10d" : backend));
  auto min = OptInt(elastic, "minReplicas");
  auto max = OptInt(elastic, "maxReplicas");
  if (!min || !max) {
    return Status(Code::kInvalid, "cannot find the minReplicas and maxReplicas");
  }
  env.push_back(Env("PET_NNODES", std::to_string(*min) + ":" + std::to_string(*max)));
  if (!Field(elastic, "maxRestarts").is_null()) {
    env.push_back(Env("PET_MAX_RESTARTS", IntText(elastic["maxRestarts"])));
  }
  if (!Field(elastic, "nProcPerNode").is_null()) {
    env.push_back(Env("PET_NPROC_PER_NODE", IntText(elastic["nProcPerNode"])));
  }
  if (!Field(elastic, "rdzvId").is_null()) {
    env.push_back(Env("PET_RDZV_ID", Str(elastic, "rdzvId")));
  }
  const Json& conf = Field(elastic, "rdzvConf");
  if (conf.is_array()) {
    std::string value;
    for (const Json& kv : conf) value += Str(kv, "key") + "=" + Str(kv, "value") + ",";
    // Upstream slices off the trailing comma; an explicit empty list panics there.
    if (!value.empty()) value.pop_back();
    env.push_back(Env("PET_RDZV_CONF", value));
  }
  const Json& standalone = Field(elastic, "standalone");
  if (standalone.is_boolean() && standalone.get<bool>()) env.push_back(Env("PET_STANDALONE", ""));
  return env;
}

Result<Json> PodEnv(const Json& job, const std::string& rtype, std::int64_t index) {
  Json env = Json::array();
  env.push_back(Env("PYTHONUNBUFFERED", "1"));
  const std::string job_name = Str(Field(job, "metadata"), "name");
  if (HasMaster(job)) {
    ASSIGN_OR_RETURN(std::int64_t port, PortFromJob(job, kMaster));
    const std::string addr = GenGeneralName(job_name, kMaster, "0");
    env.push_back(Env("MASTER_PORT", std::to_string(port)));
    env.push_back(Env("PET_MASTER_PORT", std::to_string(port)));
    env.push_back(Env("MASTER_ADDR", addr));
    env.push_back(Env("PET_MASTER_ADDR", addr));
    std::int64_t world_size = TotalReplicas(job) * NprocPerNodeInt(job);
    std::int64_t rank = index;
    if (rtype == kMaster) {
      if (rank != 0) {
        return Status(Code::kInvalid,
                      "invalid config: There should be only a single master with index=0");
      }
    } else {
      rank = index + 1;
    }
    env.push_back(Env("WORLD_SIZE", std::to_string(world_size)));
    env.push_back(Env("RANK", std::to_string(rank)));
    env.push_back(Env("PET_NODE_RANK", std::to_string(rank)));
  }
  const Json& nproc = Field(Field(job, "spec"), "nprocPerNode");
  if (!nproc.is_null()) env.push_back(Env("PET_NPROC_PER_NODE", IntText(nproc)));
  if (Field(Field(job, "spec"), "elasticPolicy").is_object()) {
    ASSIGN_OR_RETURN(Json elastic, ElasticEnv(job));
    for (Json& e : elastic) env.push_back(std::move(e));
  } else {
    env.push_back(Env("PET_NNODES", std::to_string(TotalReplicas(job))));
  }
  return env;
}

Json InitContainers(const Json& job, const std::string& rtype,
                    const InitContainerOptions& options) {
  Json out = Json::array();
  if (rtype != kWorker || !HasMaster(job)) return out;
  const std::string master = GenGeneralName(Str(Field(job, "metadata"), "name"), kMaster, "0");
  out.push_back(
      {{"name", "init-pytorch"},
       {"image", options.image},
       {"imagePullPolicy", "IfNotPresent"},
       {"resources",
        {{"limits", {{"cpu", "100m"}, {"memory", "20Mi"}}},
         {"requests", {{"cpu", "50m"}, {"memory", "10Mi"}}}}},
       {"command",
        {"sh", "-c",
         "err=1;for i in $(seq " + std::to_string(options.max_tries) + "); do if nslookup " +
             master +
             "; then err=0 && break; fi;echo waiting for master; sleep 2; done; exit $err"}}});
  return out;
}

Result<Json> DesiredPod(const Json& job, const std::string& rtype, std::int64_t index,
                        const InitContainerOptions& options) {
  const Json& rspec = ReplicaSpec(job, rtype);
  const Json& meta = Field(job, "metadata");
  const std::string job_name = Str(meta, "name");
  const std::string idx = std::to_string(index);
  const Json& tmpl = Field(rspec, "template");
  const Json& tmeta = Field(tmpl, "metadata");

  Json labels = Field(tmeta, "labels").is_object() ? tmeta["labels"] : Json::object();
  labels.update(GenLabels(job_name));
  labels[kReplicaTypeLabel] = AsciiLower(rtype);
  labels[kReplicaIndexLabel] = idx;
  if (IsMasterRole(job, rtype, index)) labels[kJobRoleLabel] = "master";
  labels[kLegacyJobNameLabel] = job_name;

  Json pod_meta = {{"name", GenGeneralName(job_name, rtype, idx)},
                   {"namespace", Str(meta, "namespace")},
                   {"labels", std::move(labels)},
                   {"ownerReferences", Json::array({OwnerReference(job)})}};
  if (Field(tmeta, "annotations").is_object()) pod_meta["annotations"] = tmeta["annotations"];
  if (Field(tmeta, "finalizers").is_array()) pod_meta["finalizers"] = tmeta["finalizers"];

  Json spec = Field(tmpl, "spec").is_object() ? tmpl["spec"] : Json::object();
  ASSIGN_OR_RETURN(Json env, PodEnv(job, rtype, index));
  if (spec["containers"].is_array()) {
    for (Json& c : spec["containers"]) {
      if (!c.is_object()) continue;
      if (!c["env"].is_array()) c["env"] = Json::array();
      for (const Json& e : env) c["env"].push_back(e);
    }
  }
  Json init = InitContainers(job, rtype, options);
  if (!init.empty()) {
    if (!spec["initContainers"].is_array()) spec["initContainers"] = Json::array();
    for (Json& c : init) spec["initContainers"].push_back(std::move(c));
  }
  spec["restartPolicy"] = PodRestartPolicy(RestartPolicy(rspec));
  return Json{{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", std::move(pod_meta)},
              {"spec", std::move(spec)}};
}

Result<Json> DesiredService(const Json& job, const std::string& rtype, std::int64_t index) {
  const Json& meta = Field(job, "metadata");
  const std::string job_name = Str(meta, "name");
  const std::string idx = std::to_string(index);
  Json labels = GenLabels(job_name);
  labels[kReplicaTypeLabel] = AsciiLower(rtype);
  labels[kReplicaIndexLabel] = idx;

  const Json& containers =
      Field(Field(Field(ReplicaSpec(job, rtype), "template"), "spec"), "containers");
  Json pytorch = nullptr;
  if (containers.is_array()) {
    for (const Json& c : containers) {
      if (Str(c, "name") == kDefaultContainerName) {
        pytorch = c;
        break;
      }
    }
  }
  if (pytorch.is_null()) return Status(Code::kNotFound, "failed to find the port");
  // GetPortsFromJob builds a name->port map; Go ranges over it in random order, pjemu sorts.
  std::vector<std::pair<std::string, std::int64_t>> ports;
  const Json port_list = Field(pytorch, "ports").is_array() ? pytorch["ports"] : Json::array();
  for (const Json& p : port_list) {
    auto it = std::find_if(ports.begin(), ports.end(),
                           [&](const auto& e) { return e.first == Str(p, "name"); });
    std::int64_t port = OptInt(p, "containerPort").value_or(0);
    if (it != ports.end()) {
      it->second = port;
    } else {
      ports.emplace_back(Str(p, "name"), port);
    }
  }
  std::sort(ports.begin(), ports.end());
  Json svc_ports = Json::array();
  for (const auto& [name, port] : ports) svc_ports.push_back({{"name", name}, {"port", port}});
  return Json{
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata",
       {{"name", GenGeneralName(job_name, rtype, idx)},
        {"namespace", Str(meta, "namespace")},
        {"labels", labels},
        {"ownerReferences", Json::array({OwnerReference(job)})}}},
      {"spec", {{"clusterIP", "None"}, {"selector", labels}, {"ports", std::move(svc_ports)}}}};
}

Result<std::vector<Json>> DesiredPods(const Json& job, const InitContainerOptions& options) {
  std::vector<Json> out;
  for (const std::string& rtype : ReplicaTypes(job)) {
    std::int64_t n = Replicas(ReplicaSpec(job, rtype));
    for (std::int64_t i = 0; i < n; ++i) {
      ASSIGN_OR_RETURN(Json pod, DesiredPod(job, rtype, i, options));
      out.push_back(std::move(pod));
    }
  }
  return out;
}

Result<std::vector<Json>> DesiredServices(const Json& job) {
  std::vector<Json> out;
  for (const std::string& rtype : ReplicaTypes(job)) {
    std::int64_t n = Replicas(ReplicaSpec(job, rtype));
    for (std::int64_t i = 0; i < n; ++i) {
      ASSIGN_OR_RETURN(Json svc, DesiredService(job, rtype, i));
      out.push_back(std::move(svc));
    }
  }
  return out;
}

Json DesiredHpa(const Json& job) {
  const Json& elastic = Field(Field(job, "spec"), "elasticPolicy");
  if (!elastic.is_object() || Field(elastic, "metrics").is_null()) return nullptr;
  const Json& meta = Field(job, "metadata");
  Json spec = {{"scaleTargetRef",
                {{"kind", api::kPyTorchJobKind},
                 {"name", Str(meta, "name")},
                 {"apiVersion", Str(job, "apiVersion")}}},
               {"maxReplicas", Field(elastic, "maxReplicas")},
               {"metrics", elastic["metrics"]}};
  if (!Field(elastic, "minReplicas").is_null()) spec["minReplicas"] = elastic["minReplicas"];
  return {{"apiVersion", "autoscaling/v2"},
          {"kind", "HorizontalPodAutoscaler"},
          {"metadata",
           {{"name", Str(meta, "name")},
            {"namespace", Str(meta, "namespace")},
            {"ownerReferences", Json::array({OwnerReference(job)})}}},
          {"spec", spec}};
}

}  // namespace pjemu::pytorchjob
